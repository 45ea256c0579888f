package catalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// A single-pass reader for provider output. It checks JSON syntax and
// UTF-8 while it decodes, keeps each string's raw bytes instead of
// unquoting them, and reproduces exactly what encoding/json would decode
// into the MCP structs (see the shapes in output.go):
//
//   - object keys match a field exactly or, failing that, case-insensitively
//     (bytes.EqualFold, as encoding/json's folded names do);
//   - a repeated key decodes again into the same field: the last string,
//     number or bool wins, a repeated object merges into the one before, and
//     a repeated array decodes into the previous elements (encoding/json's
//     slice reuse), so what is checked afterwards is what is sent;
//   - null leaves a string, bool or struct as it is, and clears a pointer
//     or slice; null for a raw field (_meta) is kept as "null";
//   - a value of the wrong type, an integer that does not fit or has a
//     fraction or exponent, and nesting deeper than 10,000 are errors;
//   - after the value only whitespace may follow, or anything starting
//     with ']' or '}' (json.Decoder.More's rule), still valid UTF-8.
//
// Every error is errOutput. The reader never retains the input after the
// caller has copied what it encodes.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// plain[c] is true for the bytes that stand for themselves inside a JSON
// string: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// jstr is a JSON string as the provider wrote it.
type jstr struct {
	raw []byte // the literal with its quotes; nil when absent
	n   int    // decoded length in bytes (approximate when sur)
	esc bool   // has a backslash escape
	sur bool   // has a \u escape of a UTF-16 surrogate
	ok  bool   // set (for fields that are pointers in MCP's shape)
}

// String returns the decoded string.
func (s jstr) String() string {
	if len(s.raw) < 2 {
		return ""
	}
	if !s.esc {
		return string(s.raw[1 : len(s.raw)-1])
	}
	var v string
	_ = json.Unmarshal(s.raw, &v) // validated by the reader; cannot fail
	return v
}

// size returns the decoded length in bytes.
func (s jstr) size() int {
	if s.sur {
		return len(s.String())
	}
	return s.n
}

// empty reports whether the decoded string is "".
func (s jstr) empty() bool { return len(s.raw) <= 2 }

// is reports whether the decoded string is v.
func (s jstr) is(v string) bool {
	if !s.esc && len(s.raw) >= 2 {
		return string(s.raw[1:len(s.raw)-1]) == v
	}
	return s.String() == v
}

// appendTo appends s as a JSON string. The provider's bytes are sent as
// they are, except a string with a \u surrogate escape: encoding/json
// decodes a lone surrogate to U+FFFD, so such a string is decoded and
// re-encoded to send exactly what the decoding saw.
func (s jstr) appendTo(b []byte) []byte {
	switch {
	case len(s.raw) < 2:
		return append(b, '"', '"')
	case s.sur:
		enc, _ := encode(s.String())
		return append(b, enc...)
	}
	return append(b, s.raw...)
}

// jdec reads one JSON value. The first error sticks, and fail moves to
// the end of the input, so nothing after it is read.
type jdec struct {
	b     []byte
	i     int
	depth int
	err   error
}

func (d *jdec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = outputErr("malformed JSON at offset %d: %s", d.i, fmt.Sprintf(format, args...))
	}
	d.i = len(d.b)
}

// ws skips whitespace and returns the next byte, or 0 at the end.
func (d *jdec) ws() byte {
	for d.i < len(d.b) {
		switch c := d.b[d.i]; c {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return c
		}
	}
	return 0
}

// end checks what follows the value (see the package rule above).
func (d *jdec) end() error {
	if d.err != nil {
		return d.err
	}
	switch c := d.ws(); {
	case d.i == len(d.b):
		return nil
	case c == ']' || c == '}':
		if !utf8.Valid(d.b[d.i:]) {
			return outputErr("not valid UTF-8")
		}
		return nil
	}
	return outputErr("trailing data after JSON value")
}

// str reads a string literal at d.i.
func (d *jdec) str() jstr {
	b, start := d.b, d.i
	i := start + 1
	s := jstr{ok: true}
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			d.fail("unterminated string")
			return jstr{}
		}
		switch c := b[i]; {
		case c == '"':
			s.raw = b[start : i+1]
			s.n += i - start - 1 // the bytes between the quotes, less what escapes saved (counted above)
			d.i = i + 1
			return s
		case c == '\\':
			if i+1 >= len(b) {
				d.fail("unterminated string")
				return jstr{}
			}
			s.esc = true
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.n-- // two bytes stand for one
				i += 2
			case 'u':
				r, ok := hex4(b[i+2:])
				if !ok {
					d.fail("invalid \\u escape")
					return jstr{}
				}
				n := utf8.RuneLen(r)
				if 0xD800 <= r && r < 0xE000 {
					s.sur, n = true, 3
				}
				s.n += n - 6
				i += 6
			default:
				d.fail("invalid escape \\%c", b[i+1])
				return jstr{}
			}
		case c < 0x20:
			d.fail("control character in string")
			return jstr{}
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				d.fail("not valid UTF-8")
				return jstr{}
			}
			i += n
		}
	}
}

// plainRun returns the index of the first byte at or after i that is not
// plain, looking at eight bytes at a time while they are all plain.
func plainRun(b []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ ('"' * ones)  // zero byte where '"'
		e := w ^ ('\\' * ones) // zero byte where '\\'
		// A byte's high bit is set in the result if the byte is a control
		// character (< 0x20), '"', '\\' or not ASCII.
		if ((w-0x20*ones)|(q-ones)|(e-ones)|w)&highs != 0 {
			break
		}
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a number literal at d.i and returns its bytes.
func (d *jdec) number() []byte {
	b, start := d.b, d.i
	i := start
	digits := func() int {
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		d.fail("invalid number")
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			d.fail("invalid number")
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			d.fail("invalid number")
			return nil
		}
	}
	d.i = i
	return b[start:i]
}

// literal reads true, false or null at d.i.
func (d *jdec) literal(lit string) {
	if !bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
		d.fail("invalid literal")
		return
	}
	d.i += len(lit)
}

// null consumes a null and reports whether there was one.
func (d *jdec) null() bool {
	if d.ws() != 'n' {
		return false
	}
	d.literal("null")
	return true
}

// skip reads any value and returns its bytes.
func (d *jdec) skip() []byte {
	start := d.i
	switch c := d.ws(); {
	case c == '"':
		d.str()
	case c == '{':
		d.object("", func([]byte) { d.skip() })
	case c == '[':
		d.array("", func() { d.skip() })
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		d.number()
	case c == 0:
		d.fail("unexpected end")
	default:
		d.fail("invalid character %q", c)
	}
	if d.err != nil {
		return nil
	}
	start += countSpace(d.b[start:])
	return d.b[start:d.i]
}

func countSpace(b []byte) int {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\t' || b[n] == '\n' || b[n] == '\r') {
		n++
	}
	return n
}

// mismatch records a value of the wrong type for what (and reads past it,
// which also reports a syntax error first if the value is malformed).
func (d *jdec) mismatch(what string) {
	d.skip()
	d.fail("wrong type for %s", what)
}

// object reads an object, calling member with each key (decoded if it
// had escapes) to read the value. null is left to the caller's null
// rule: here it reads nothing into the struct. what names the target for
// type errors; "" accepts any object (skip).
func (d *jdec) object(what string, member func(key []byte)) {
	switch d.ws() {
	case '{':
	case 'n':
		d.literal("null")
		return
	default:
		d.mismatch(what)
		return
	}
	if d.depth++; d.depth > maxDepth {
		d.fail("exceeded max depth")
		return
	}
	d.i++
	if d.ws() == '}' {
		d.i++
		d.depth--
		return
	}
	for d.err == nil {
		if d.ws() != '"' {
			d.fail("expected a key")
			return
		}
		k := d.str()
		if d.ws() != ':' {
			d.fail("expected ':'")
			return
		}
		d.i++
		key := k.raw
		if len(key) >= 2 {
			key = key[1 : len(key)-1]
		}
		if k.esc {
			key = []byte(k.String())
		}
		member(key)
		switch d.ws() {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return
		default:
			d.fail("expected ',' or '}'")
		}
	}
}

// array reads an array, calling elem for each element.
func (d *jdec) array(what string, elem func()) {
	if d.ws() != '[' {
		d.mismatch(what)
		return
	}
	if d.depth++; d.depth > maxDepth {
		d.fail("exceeded max depth")
		return
	}
	d.i++
	if d.ws() == ']' {
		d.i++
		d.depth--
		return
	}
	for d.err == nil {
		elem()
		switch d.ws() {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return
		default:
			d.fail("expected ',' or ']'")
		}
	}
}

// fieldIndex returns the index of the field key names: an exact match,
// else the first case-insensitive one, else -1.
func fieldIndex(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for i, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return i
		}
	}
	return -1
}

// slice decodes an array into s the way encoding/json does: null is nil,
// [] is empty, and otherwise the elements decode into the existing ones
// (also those past len left by an earlier, longer array) before growing.
func slice[T any](d *jdec, s []T, what string, elem func(*T)) []T {
	if d.null() {
		return nil
	}
	i := 0
	d.array(what, func() {
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
func (d *jdec) string(dst *jstr, what string) {
	switch d.ws() {
	case '"':
		*dst = d.str()
	case 'n':
		d.literal("null")
	default:
		d.mismatch(what)
	}
}

// optString reads a field that is a *string in MCP's shape: null unsets it.
func (d *jdec) optString(dst *jstr, what string) {
	if d.null() {
		*dst = jstr{}
		return
	}
	d.string(dst, what)
}

// boolean reads a bool field: null leaves it as it is.
func (d *jdec) boolean(dst *bool, what string) {
	switch d.ws() {
	case 't':
		d.literal("true")
		*dst = true
	case 'f':
		d.literal("false")
		*dst = false
	case 'n':
		d.literal("null")
	default:
		d.mismatch(what)
	}
}

// optInt reads a *int or *int64 field: null unsets it; anything but an
// integer in range is an error.
func optInt[T int | int64](d *jdec, dst **T, what string) {
	if d.null() {
		*dst = nil
		return
	}
	c := d.ws()
	if c != '-' && (c < '0' || c > '9') {
		d.mismatch(what)
		return
	}
	n, err := strconv.ParseInt(string(d.number()), 10, int(unsafe.Sizeof(T(0)))*8)
	if d.err != nil {
		return
	}
	if err != nil {
		d.fail("%s is not a 64-bit integer", what)
		return
	}
	if *dst == nil {
		*dst = new(T)
	}
	**dst = T(n)
}

// optNumber reads a *float64 field, keeping the literal to send.
func (d *jdec) optNumber(dst *jnum, what string) {
	if d.null() {
		*dst = jnum{}
		return
	}
	c := d.ws()
	if c != '-' && (c < '0' || c > '9') {
		d.mismatch(what)
		return
	}
	raw := d.number()
	if d.err != nil {
		return
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		d.fail("%s is out of range", what)
		return
	}
	*dst = jnum{raw: raw, v: f, ok: true}
}

// jnum is a JSON number as the provider wrote it.
type jnum struct {
	raw []byte
	v   float64
	ok  bool
}

// raw reads a json.RawMessage field: any value, null included.
func (d *jdec) raw(dst *[]byte) {
	if v := d.skip(); d.err == nil {
		*dst = v
	}
}

// strings reads a []string field.
func (d *jdec) strings(dst *[]jstr, what string) {
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
