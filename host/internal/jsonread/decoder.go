package jsonread

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxDepth is encoding/json's nesting limit, which the reader applies to
// the whole value.
const MaxDepth = 10000

// SyntaxError is malformed JSON: the value cannot be read at all.
type SyntaxError struct {
	Offset int    // where the problem was found
	Msg    string // what it was
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonread: malformed JSON at offset %d: %s", e.Offset, e.Msg)
}

// MemberError is a member name refused in an object the host reads: a
// name repeated, or one that matches a known name only by case.
type MemberError struct {
	// Object names the object (a dotted path, or what the caller said),
	// "" for the top level.
	Object string
	// Name is the name as written (decoded), cut to 64 bytes.
	Name string
	// Known is the known name Name differs from only by case, "" for a
	// repeated name.
	Known string
}

func (e *MemberError) Error() string {
	in := ""
	if e.Object != "" {
		in = " in " + e.Object
	}
	if e.Known != "" {
		return fmt.Sprintf("member %q%s differs from %q only in case", e.Name, in, e.Known)
	}
	return fmt.Sprintf("member %q%s is repeated", e.Name, in)
}

// TypeError is a value of the wrong JSON type for what the host reads.
type TypeError struct {
	Field string // what the value was for (a dotted path)
	Want  string // the JSON type it must have: string, number, object, ...
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("%s must be of JSON type %s", e.Field, e.Want)
}

// Names are the member names of one kind of object, at most 64.
type Names struct {
	list []string
}

// NewNames returns the names of an object's known members; a member's
// index in Object is its position here.
func NewNames(names ...string) *Names {
	if len(names) > 64 {
		panic("jsonread: more than 64 names")
	}
	return &Names{list: names}
}

// Strings returns the names.
func (n *Names) Strings() []string { return append([]string(nil), n.list...) }

// index returns the position of key, or -1.
func (n *Names) index(key []byte) int {
	for i, s := range n.list {
		if string(key) == s {
			return i
		}
	}
	return -1
}

// folded returns the known name key matches only by case, or "".
func (n *Names) folded(key []byte) string {
	for _, s := range n.list {
		if bytes.EqualFold(key, []byte(s)) {
			return s
		}
	}
	return ""
}

// Decoder reads one JSON value from b. A syntax error stops reading (the
// position moves to the end, so every later read fails and loops stop); a
// refusal (MemberError, TypeError) is recorded and reading goes on, so a
// later syntax error still wins and the caller can read what else it
// needs (a request's id) before it answers.
type Decoder struct {
	b       []byte
	i       int
	depth   int
	err     error // the first syntax error
	refusal error // the first refusal
}

// NewDecoder returns a Decoder of b. The reader keeps slices of b (raw
// strings and values), never a copy.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Bytes returns the input.
func (d *Decoder) Bytes() []byte { return d.b }

// Offset returns the position of the next byte to read.
func (d *Decoder) Offset() int { return d.i }

// Err returns the first syntax error, else the first refusal, else nil.
func (d *Decoder) Err() error {
	if d.err != nil {
		return d.err
	}
	return d.refusal
}

// SyntaxErr returns the first syntax error, or nil.
func (d *Decoder) SyntaxErr() error { return d.err }

// TakeRefusal returns the first refusal recorded and forgets it, so that
// a caller can tell where one happened (a request's params, not its
// envelope).
func (d *Decoder) TakeRefusal() error {
	r := d.refusal
	d.refusal = nil
	return r
}

// Refuse records err as a refusal unless one is recorded already.
func (d *Decoder) Refuse(err error) {
	if d.refusal == nil {
		d.refusal = err
	}
}

// Failed reports whether anything was refused or malformed.
func (d *Decoder) Failed() bool { return d.err != nil || d.refusal != nil }

func (d *Decoder) fail(msg string) {
	if d.err == nil {
		d.err = &SyntaxError{Offset: d.i, Msg: msg}
	}
	d.i = len(d.b)
}

// Peek skips whitespace and returns the next byte, or 0 at the end.
func (d *Decoder) Peek() byte {
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

// End checks that only whitespace follows the value and returns Err.
func (d *Decoder) End() error {
	if d.Peek(); d.err == nil && d.i < len(d.b) {
		d.fail("data after the JSON value")
	}
	return d.Err()
}

// Str is a JSON string as written: its bytes are kept, not unquoted.
type Str struct {
	// Raw is the literal with its quotes; nil when absent.
	Raw []byte
	n   int  // decoded length (approximate when sur)
	esc bool // has a backslash escape
	sur bool // has a \u escape of a UTF-16 surrogate
}

// Present reports whether a string was read.
func (s Str) Present() bool { return s.Raw != nil }

// Escaped reports whether the literal has a backslash escape.
func (s Str) Escaped() bool { return s.esc }

// Surrogate reports whether the literal has a \u escape of a UTF-16
// surrogate, which encoding/json decodes to U+FFFD when it is lone.
func (s Str) Surrogate() bool { return s.sur }

// String returns the decoded string.
func (s Str) String() string {
	if len(s.Raw) < 2 {
		return ""
	}
	if !s.esc {
		return string(s.Raw[1 : len(s.Raw)-1])
	}
	var v string
	_ = json.Unmarshal(s.Raw, &v) // validated by the reader; cannot fail
	return v
}

// Len returns the decoded length in bytes.
func (s Str) Len() int {
	if s.sur {
		return len(s.String())
	}
	return s.n
}

// Empty reports whether the decoded string is "".
func (s Str) Empty() bool { return len(s.Raw) <= 2 }

// Is reports whether the decoded string is v.
func (s Str) Is(v string) bool {
	if !s.esc && len(s.Raw) >= 2 {
		return string(s.Raw[1:len(s.Raw)-1]) == v
	}
	return s.String() == v
}

// plain[c] is true for the bytes that stand for themselves inside a JSON
// string: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string literal at d.i (the caller saw the quote).
func (d *Decoder) str() Str {
	b, start := d.b, d.i
	i := start + 1
	s := Str{}
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			d.i = i
			d.fail("unterminated string")
			return Str{}
		}
		switch c := b[i]; {
		case c == '"':
			s.Raw = b[start : i+1]
			s.n += i - start - 1 // the bytes between the quotes, less what escapes saved
			d.i = i + 1
			return s
		case c == '\\':
			if i+1 >= len(b) {
				d.i = i
				d.fail("unterminated string")
				return Str{}
			}
			s.esc = true
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.n-- // two bytes stand for one
				i += 2
			case 'u':
				r, ok := hex4(b[i+2:])
				if !ok {
					d.i = i
					d.fail("invalid \\u escape")
					return Str{}
				}
				n := utf8.RuneLen(r)
				if 0xD800 <= r && r < 0xE000 {
					s.sur, n = true, 3
				}
				s.n += n - 6
				i += 6
			default:
				d.i = i
				d.fail("invalid escape")
				return Str{}
			}
		case c < 0x20:
			d.i = i
			d.fail("control character in string")
			return Str{}
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				d.i = i
				d.fail("not valid UTF-8")
				return Str{}
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

// Number reads a number literal and returns its bytes; the caller saw
// '-' or a digit.
func (d *Decoder) Number() []byte {
	d.Peek()
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
		d.i = i
		d.fail("invalid number")
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			d.i = i
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
			d.i = i
			d.fail("invalid number")
			return nil
		}
	}
	d.i = i
	return b[start:i]
}

// literal reads true, false or null at d.i.
func (d *Decoder) literal(lit string) {
	if !bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
		d.fail("invalid literal")
		return
	}
	d.i += len(lit)
}

// Null consumes a null and reports whether there was one.
func (d *Decoder) Null() bool {
	if d.Peek() != 'n' {
		return false
	}
	d.literal("null")
	return true
}

// Skip reads any value, checking it is well-formed, and returns its bytes
// (without the whitespace before it). Objects inside are opaque: their
// member names are not checked (see the package comment).
func (d *Decoder) Skip() []byte {
	start := d.i + countSpace(d.b[d.i:])
	d.skip()
	if d.err != nil {
		return nil
	}
	return d.b[start:d.i]
}

func (d *Decoder) skip() {
	switch c := d.Peek(); {
	case c == '"':
		d.str()
	case c == '{':
		if !d.open() {
			return
		}
		if d.Peek() == '}' {
			d.close()
			return
		}
		for d.err == nil {
			if d.Peek() != '"' {
				d.fail("expected a member name")
				return
			}
			d.str()
			if d.Peek() != ':' {
				d.fail("expected ':'")
				return
			}
			d.i++
			d.skip()
			if !d.next('}') {
				return
			}
		}
	case c == '[':
		if !d.open() {
			return
		}
		if d.Peek() == ']' {
			d.close()
			return
		}
		for d.err == nil {
			d.skip()
			if !d.next(']') {
				return
			}
		}
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		d.Number()
	case c == 0:
		d.fail("unexpected end of input")
	default:
		d.fail("invalid character")
	}
}

// open consumes '{' or '[' and enters one level of nesting.
func (d *Decoder) open() bool {
	if d.depth++; d.depth > MaxDepth {
		d.fail("exceeded max depth")
		return false
	}
	d.i++
	return true
}

// close consumes '}' or ']' and leaves one level.
func (d *Decoder) close() {
	d.i++
	d.depth--
}

// next reads what follows an element: ',' (true: another follows) or
// the closing end (false).
func (d *Decoder) next(end byte) bool {
	switch d.Peek() {
	case ',':
		d.i++
		return true
	case end:
		d.close()
	default:
		if end == '}' {
			d.fail("expected ',' or '}'")
		} else {
			d.fail("expected ',' or ']'")
		}
	}
	return false
}

func countSpace(b []byte) int {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\t' || b[n] == '\n' || b[n] == '\r') {
		n++
	}
	return n
}

// Mismatch records that the next value has the wrong JSON type for field
// (want names the right one) and reads past it.
func (d *Decoder) Mismatch(field, want string) {
	d.skip()
	if d.err == nil {
		d.Refuse(&TypeError{Field: field, Want: want})
	}
}

// memberName reads a member name and its colon; the name is decoded if
// it had escapes. Names are short and plain as a rule: those are read
// with a byte loop, others by str.
func (d *Decoder) memberName() []byte {
	if d.Peek() != '"' {
		d.fail("expected a member name")
		return nil
	}
	b := d.b
	start := d.i + 1
	i := start
	for i < len(b) && plain[b[i]] {
		i++
	}
	var key []byte
	if i < len(b) && b[i] == '"' {
		key, d.i = b[start:i], i+1
	} else {
		k := d.str()
		if d.err != nil {
			return nil
		}
		key = k.Raw[1 : len(k.Raw)-1]
		if k.esc {
			key = []byte(k.String())
		}
	}
	if d.i < len(b) && b[d.i] == ':' {
		d.i++
		return key
	}
	if d.Peek() != ':' {
		d.fail("expected ':'")
		return nil
	}
	d.i++
	return key
}

// seenNames remembers the names of an object's members that are not
// among its known names, to refuse a repeated one.
type seenNames struct {
	few  [8][]byte
	n    int
	many map[string]struct{}
}

// add records key and reports false if it was seen before.
func (s *seenNames) add(key []byte) bool {
	if s.many != nil {
		if _, ok := s.many[string(key)]; ok {
			return false
		}
		s.many[string(key)] = struct{}{}
		return true
	}
	for _, k := range s.few[:s.n] {
		if string(k) == string(key) {
			return false
		}
	}
	if s.n < len(s.few) {
		s.few[s.n] = key
		s.n++
		return true
	}
	s.many = make(map[string]struct{}, 2*len(s.few))
	for _, k := range s.few {
		s.many[string(k)] = struct{}{}
	}
	s.many[string(key)] = struct{}{}
	return true
}

func cut(key []byte) string {
	if len(key) > 64 {
		key = key[:64]
	}
	return string(key)
}

// Object reads an object the host reads, whose known member names are
// names; path names it in errors ("" for the top level). For each member
// it calls member with the name's index in names (-1 for an unknown
// name) and the name, and member must read the value (Skip for one it
// does not use). A repeated name, or one matching a known name only by
// case, is refused and its value skipped; member is not called.
//
// null reads nothing (encoding/json's rule for a struct): a caller for
// whom null means something else checks Null first. Any other value that
// is not an object is a TypeError for path.
func (d *Decoder) Object(path string, names *Names, member func(i int, key []byte)) {
	if !d.enter(path) {
		return
	}
	var seen uint64
	var other seenNames
	for d.err == nil {
		key := d.memberName()
		if d.err != nil {
			return
		}
		switch i := names.index(key); {
		case i >= 0 && seen&(1<<i) != 0:
			d.Refuse(&MemberError{Object: path, Name: names.list[i]})
			d.skip()
		case i >= 0:
			seen |= 1 << i
			member(i, key)
		default:
			if k := names.folded(key); k != "" {
				d.Refuse(&MemberError{Object: path, Name: cut(key), Known: k})
				d.skip()
			} else if !other.add(key) {
				d.Refuse(&MemberError{Object: path, Name: cut(key)})
				d.skip()
			} else {
				member(-1, key)
			}
		}
		if !d.next('}') {
			return
		}
	}
}

// enter starts reading an object for Object and Map: it reports whether
// members follow. null is read (and means nothing), an empty object is
// read whole, and any other value is a TypeError for path.
func (d *Decoder) enter(path string) bool {
	switch d.Peek() {
	case '{':
	case 'n':
		d.literal("null")
		return false
	default:
		d.Mismatch(pathOr(path), "object")
		return false
	}
	if !d.open() {
		return false
	}
	if d.Peek() == '}' {
		d.close()
		return false
	}
	return true
}

// Map reads an object whose member names are data (a map): a repeated
// name is refused and its value skipped; member reads each value. null
// and other values are as for Object.
func (d *Decoder) Map(path string, member func(key []byte)) {
	if !d.enter(path) {
		return
	}
	var seen seenNames
	for d.err == nil {
		key := d.memberName()
		if d.err != nil {
			return
		}
		if !seen.add(key) {
			d.Refuse(&MemberError{Object: path, Name: cut(key)})
			d.skip()
		} else {
			member(key)
		}
		if !d.next('}') {
			return
		}
	}
}

// Array reads an array, calling elem to read each element. Any other
// value is a TypeError for path (null too: the caller decides what null
// means first).
func (d *Decoder) Array(path string, elem func()) {
	if d.Peek() != '[' {
		d.Mismatch(pathOr(path), "array")
		return
	}
	if !d.open() {
		return
	}
	if d.Peek() == ']' {
		d.close()
		return
	}
	for d.err == nil {
		elem()
		if !d.next(']') {
			return
		}
	}
}

// String reads a string. null reads nothing and returns an absent Str;
// another type is a TypeError for path.
func (d *Decoder) String(path string) Str {
	switch d.Peek() {
	case '"':
		return d.str()
	case 'n':
		d.literal("null")
	default:
		d.Mismatch(path, "string")
	}
	return Str{}
}

// Bool reads a boolean. null reads nothing (ok false); another type is a
// TypeError for path.
func (d *Decoder) Bool(path string) (v, ok bool) {
	switch d.Peek() {
	case 't':
		d.literal("true")
		return true, true
	case 'f':
		d.literal("false")
		return false, true
	case 'n':
		d.literal("null")
	default:
		d.Mismatch(path, "boolean")
	}
	return false, false
}

// Num reads a number and returns its literal. null reads nothing (nil);
// another type is a TypeError for path.
func (d *Decoder) Num(path string) []byte {
	switch c := d.Peek(); {
	case c == '-' || '0' <= c && c <= '9':
		return d.Number()
	case c == 'n':
		d.literal("null")
	default:
		d.Mismatch(path, "number")
	}
	return nil
}

func pathOr(p string) string {
	if p == "" {
		return "value"
	}
	return p
}

// CheckUnique checks that b is one JSON value, valid UTF-8, in which no
// object repeats a member name, at any depth: for the cold paths that must
// read a whole value one way only (a JWT's header and claims, the
// arguments a requestState is bound to).
func CheckUnique(b []byte) error {
	d := NewDecoder(b)
	d.unique()
	return d.End()
}

func (d *Decoder) unique() {
	switch d.Peek() {
	case '{':
		d.Map("", func([]byte) { d.unique() })
	case '[':
		d.Array("", d.unique)
	default:
		d.Skip()
	}
}
