package interrupt

import (
	"errors"
	"fmt"
)

// ErrUnexpectedEnd reports a read past the end of the input: a truncated
// file, or a size field that claims more than it holds.
var ErrUnexpectedEnd = errors.New("unexpected end")

// reader decodes the WebAssembly binary format's primitives from b.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, ErrUnexpectedEnd
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, ErrUnexpectedEnd
	}
	return r.b[r.pos], nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.pos) {
		return nil, ErrUnexpectedEnd
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

func (r *reader) skip(n int) error {
	if n > len(r.b)-r.pos {
		return ErrUnexpectedEnd
	}
	r.pos += n
	return nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes whose value fits 32
// bits. Padded encodings are accepted, as the format allows.
func (r *reader) u32() (uint32, error) {
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 { // one byte: most indices
		v := uint32(r.b[r.pos])
		r.pos++
		return v, nil
	}
	var v uint32
	for i := 0; ; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 4 {
			if c&0xf0 != 0 { // continuation or bits beyond 32
				return 0, errors.New("u32 out of range")
			}
			return v | uint32(c)<<28, nil
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

// signed reads a signed LEB128 of at most bits bits (32, 33 or 64) and
// returns its value.
func (r *reader) signed(bits int) (int64, error) {
	var v int64
	shift := 0
	maxBytes := (bits + 6) / 7
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == maxBytes-1 {
			// The last byte holds the top bits: no continuation, and the
			// unused bits must all equal the sign bit.
			if c&0x80 != 0 {
				return 0, fmt.Errorf("s%d too long", bits)
			}
			used := bits - shift // value bits left in this byte, sign included
			if used < 7 {
				rest := int8(c<<1) >> uint(used) // c's bits [used-1, 6], sign-extended
				if rest != 0 && rest != -1 {
					return 0, fmt.Errorf("s%d out of range", bits)
				}
			}
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("s%d too long", bits)
}

// name skips a length-prefixed UTF-8 name and returns its bytes.
func (r *reader) name() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(n)
}

// appendU32 appends v as an unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendS32 appends v as a signed LEB128.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
