package catalog

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// Reading provider output with the host's one strict reader
// (host/internal/jsonread): one pass that checks syntax and UTF-8, refuses
// a repeated member and one that matches a known member only by case,
// ignores unknown members, and keeps each string's bytes instead of
// unquoting them. The readers in output.go decode into the MCP shapes
// with encoding/json's rules otherwise:
//
//   - null leaves a string, bool or struct as it is, and clears a pointer
//     or slice; null for a raw field (_meta) is kept as "null";
//   - a value of the wrong type, an integer that does not fit or has a
//     fraction or exponent, and nesting deeper than 10,000 are errors;
//   - only whitespace may follow the value.
//
// Every error wraps errOutput, so a refused output is reported to the
// plugin like any other bad output (counted toward quarantine). The reader
// never retains the input after the caller has copied what it encodes.

// jstr is a JSON string as the provider wrote it.
type jstr struct{ jsonread.Str }

// appendTo appends s as a JSON string. The provider's bytes are sent as
// they are, except a string with a \u surrogate escape: encoding/json
// decodes a lone surrogate to U+FFFD, so such a string is decoded and
// re-encoded to send exactly what the decoding saw.
func (s jstr) appendTo(b []byte) []byte {
	switch {
	case len(s.Raw) < 2:
		return append(b, '"', '"')
	case s.Surrogate():
		enc, _ := encode(s.String())
		return append(b, enc...)
	}
	return append(b, s.Raw...)
}

// jdec reads one provider output.
type jdec struct{ *jsonread.Decoder }

// newDec returns a reader of b.
func newDec(b []byte) jdec { return jdec{jsonread.NewDecoder(b)} }

// end checks what follows the value and returns the first problem.
func (d jdec) end() error {
	if err := d.End(); err != nil {
		return fmt.Errorf("%w: %w", errOutput, err)
	}
	return nil
}

// slice decodes an array into s the way encoding/json does: null is nil,
// [] is empty, and otherwise the elements decode into the existing ones
// before growing.
func slice[T any](d jdec, s []T, what string, elem func(*T)) []T {
	if d.Null() {
		return nil
	}
	i := 0
	d.Array(what, func() {
		if i >= cap(s) {
			var zero T
			s = append(s[:i], zero)
		}
		s = s[:i+1]
		elem(&s[i])
		i++
	})
	if i == 0 {
		return []T{}
	}
	return s[:i]
}

// string reads a string field: null leaves it as it is.
func (d jdec) string(dst *jstr, what string) {
	if s := d.String(what); s.Present() {
		dst.Str = s
	}
}

// optString reads a field that is a *string in MCP's shape: null unsets it.
func (d jdec) optString(dst *jstr, what string) {
	if d.Null() {
		*dst = jstr{}
		return
	}
	d.string(dst, what)
}

// boolean reads a bool field: null leaves it as it is.
func (d jdec) boolean(dst *bool, what string) {
	if v, ok := d.Bool(what); ok {
		*dst = v
	}
}

// optInt reads a *int or *int64 field: null unsets it; anything but an
// integer in range is an error.
func optInt[T int | int64](d jdec, dst **T, what string) {
	if d.Null() {
		*dst = nil
		return
	}
	lit := d.Num(what)
	if lit == nil {
		return
	}
	n, err := strconv.ParseInt(string(lit), 10, int(unsafe.Sizeof(T(0)))*8)
	if err != nil {
		d.Refuse(fmt.Errorf("%s is not a 64-bit integer", what))
		return
	}
	if *dst == nil {
		*dst = new(T)
	}
	**dst = T(n)
}

// jnum is a JSON number as the provider wrote it.
type jnum struct {
	raw []byte
	v   float64
	ok  bool
}

// optNumber reads a *float64 field, keeping the literal to send.
func (d jdec) optNumber(dst *jnum, what string) {
	if d.Null() {
		*dst = jnum{}
		return
	}
	raw := d.Num(what)
	if raw == nil {
		return
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		d.Refuse(fmt.Errorf("%s is out of range", what))
		return
	}
	*dst = jnum{raw: raw, v: f, ok: true}
}

// raw reads a json.RawMessage field: any value, null included, opaque.
func (d jdec) raw(dst *[]byte) {
	if v := d.Skip(); v != nil {
		*dst = v
	}
}

// strings reads a []string field.
func (d jdec) strings(dst *[]jstr, what string) {
	*dst = slice(d, *dst, what, func(s *jstr) { d.string(s, what) })
}

// appendCompact appends a validated JSON value without insignificant
// whitespace (what encoding/json does to a json.RawMessage).
func appendCompact(b, v []byte) []byte {
	in := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case in && c == '\\':
			b = append(b, c, v[i+1])
			i++
			continue
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		b = append(b, c)
	}
	return b
}

// field appends the key of the next member of the object being built.
func field(b []byte, name string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}
