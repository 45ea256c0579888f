package mcp

import (
	"bytes"
	"encoding/json"
)

// The fast path of Decode: one pass over a well-formed request or
// notification, decoding the envelope and the params together, instead of
// encoding/json's four (validate and decode the envelope, then validate and
// decode the params). It handles only the common shape and gives up on
// anything else — malformed JSON, responses, null or wrongly typed members,
// duplicate members, member names that differ from a known one only in
// case (encoding/json would match them) — and Decode then takes the
// general path, which is the authority on every error. When the fast path
// succeeds, its Message equals the general path's (FuzzDecodeFast checks
// this); member values it does not read itself are validated with
// json.Valid and kept raw, or decoded by encoding/json.

// Member names the fast path knows, per object; an unknown name that
// matches one of them case-insensitively sends the message to the general
// path.
var (
	envelopeNames = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsNames   = []string{"_meta", "cursor", "uri", "name", "arguments", "ref", "argument", "context", "level",
		"protocolVersion", "capabilities", "requestId", "notifications", "inputResponses", "requestState"}
	metaNames = []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
		"io.modelcontextprotocol/logLevel", "progressToken"}
	refNames      = []string{"type", "name", "uri"}
	argumentNames = []string{"name", "value"}
	contextNames  = []string{"arguments"}
)

// knownStrings are the string values most requests repeat (jsonrpc,
// methods, versions, ref types, log levels): str returns these instead of
// allocating a copy.
var knownStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"2.0", VersionModern,
		"initialize", "ping", "server/discover", "subscriptions/listen", "logging/setLevel",
		"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "tools/list", "tools/call", "completion/complete",
		"notifications/initialized", "notifications/cancelled", "ref/prompt", "ref/resource"} {
		m[s] = s
	}
	for _, s := range legacyVersions {
		m[s] = s
	}
	for _, s := range logLevels {
		m[s] = s
	}
	return m
}()

// fastDecoder reads one message. Any problem sets bad and moves to the end
// of the input, so that every later read fails too and loops stop.
type fastDecoder struct {
	b   []byte
	i   int
	bad bool
}

// decodeFast decodes b (trimmed, starting with '{') in one pass, or
// reports false when the general path must decode it. The Message owns a
// copy of b: its raw members point into the copy.
func decodeFast(b []byte) (*Message, bool) {
	d := &fastDecoder{b: bytes.Clone(b)}
	m := &Message{}
	var seen uint8
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			break
		}
		switch string(key) {
		case "jsonrpc":
			d.once(&seen, 1)
			if d.str() != "2.0" {
				d.fail()
			}
		case "id":
			d.once(&seen, 2)
			id, err := checkID(d.raw())
			if err != nil || id == nil {
				d.fail()
			}
			m.ID = id
		case "method":
			d.once(&seen, 4)
			if m.Method = d.str(); m.Method == "" {
				d.fail()
			}
		case "params":
			d.once(&seen, 8)
			if d.peek() == '{' {
				start := d.i
				d.params(&m.p)
				m.Params = d.b[start:d.i]
			} else if string(d.raw()) != "null" {
				d.fail() // not an object: the general path words the error
			}
		case "result", "error":
			d.fail() // a response
		default:
			d.unknown(key, envelopeNames)
		}
	}
	d.ws()
	if d.bad || d.i != len(d.b) || seen&(1|4) != 1|4 {
		return nil, false // broken, trailing bytes, or jsonrpc or method missing
	}
	m.hadID = m.ID != nil
	m.modern = m.p.Meta != nil && m.p.Meta.ProtocolVersion != nil
	return m, true
}

// params reads the params object.
func (d *fastDecoder) params(p *params) {
	var seen uint16
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch string(key) {
		case "_meta":
			d.once16(&seen, 1<<0)
			p.Meta = &requestMeta{}
			d.meta(p.Meta)
		case "cursor":
			d.once16(&seen, 1<<1)
			p.Cursor = d.strPtr()
		case "uri":
			d.once16(&seen, 1<<2)
			p.URI = d.str()
		case "name":
			d.once16(&seen, 1<<3)
			p.Name = d.str()
		case "arguments":
			d.once16(&seen, 1<<4)
			p.Arguments = d.raw()
		case "ref":
			d.once16(&seen, 1<<5)
			p.Ref = &refParam{}
			d.ref(p.Ref)
		case "argument":
			d.once16(&seen, 1<<6)
			p.Argument = &argumentParam{}
			d.argument(p.Argument)
		case "context":
			d.once16(&seen, 1<<7)
			p.Context = &contextParam{}
			d.context(p.Context)
		case "level":
			d.once16(&seen, 1<<8)
			p.Level = d.strPtr()
		case "protocolVersion":
			d.once16(&seen, 1<<9)
			p.Version = d.strPtr()
		case "capabilities":
			d.once16(&seen, 1<<10)
			p.Caps = d.raw()
		case "requestId":
			d.once16(&seen, 1<<11)
			p.RequestID = d.raw()
		case "notifications":
			d.once16(&seen, 1<<12)
			d.decodeRaw(&p.Notifications)
		case "inputResponses":
			d.once16(&seen, 1<<13)
			p.InputResponses = d.raw()
		case "requestState":
			d.once16(&seen, 1<<14)
			p.RequestState = d.strPtr()
		default:
			d.unknown(key, paramsNames)
		}
	}
}

// meta reads params._meta.
func (d *fastDecoder) meta(mt *requestMeta) {
	var seen uint8
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch string(key) {
		case "io.modelcontextprotocol/protocolVersion":
			d.once(&seen, 1)
			mt.ProtocolVersion = d.strPtr()
		case "io.modelcontextprotocol/clientCapabilities":
			d.once(&seen, 2)
			mt.ClientCapabilities = d.raw()
		case "io.modelcontextprotocol/logLevel":
			d.once(&seen, 4)
			mt.LogLevel = d.strPtr()
		case "progressToken":
			d.once(&seen, 8)
			mt.ProgressToken = d.raw()
		default:
			d.unknown(key, metaNames)
		}
	}
}

// ref reads completion/complete's params.ref.
func (d *fastDecoder) ref(r *refParam) {
	var seen uint8
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch string(key) {
		case "type":
			d.once(&seen, 1)
			r.Type = d.str()
		case "name":
			d.once(&seen, 2)
			r.Name = d.str()
		case "uri":
			d.once(&seen, 4)
			r.URI = d.str()
		default:
			d.unknown(key, refNames)
		}
	}
}

// argument reads completion/complete's params.argument.
func (d *fastDecoder) argument(a *argumentParam) {
	var seen uint8
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch string(key) {
		case "name":
			d.once(&seen, 1)
			a.Name = d.strPtr()
		case "value":
			d.once(&seen, 2)
			a.Value = d.strPtr()
		default:
			d.unknown(key, argumentNames)
		}
	}
}

// context reads completion/complete's params.context.
func (d *fastDecoder) context(c *contextParam) {
	var seen uint8
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch string(key) {
		case "arguments":
			d.once(&seen, 1)
			args, ok := stringMap(d.raw())
			if !ok {
				d.fail()
			}
			c.Arguments = args
		default:
			d.unknown(key, contextNames)
		}
	}
}

func (d *fastDecoder) fail() {
	d.bad = true
	d.i = len(d.b)
}

// once fails on a member seen before: encoding/json would merge or
// overwrite, which the general path reproduces.
func (d *fastDecoder) once(seen *uint8, bit uint8) {
	if *seen&bit != 0 {
		d.fail()
	}
	*seen |= bit
}

func (d *fastDecoder) once16(seen *uint16, bit uint16) {
	if *seen&bit != 0 {
		d.fail()
	}
	*seen |= bit
}

// ws skips JSON whitespace.
func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (d *fastDecoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// expect consumes c after whitespace.
func (d *fastDecoder) expect(c byte) {
	if d.peek() != c {
		d.fail()
		return
	}
	d.i++
}

// member reads the next member name of an object and its colon; first
// says whether it is the object's first (which opens the object). It
// reports false at the object's end (consuming it) or on a problem.
func (d *fastDecoder) member(first bool) ([]byte, bool) {
	if first {
		d.expect('{')
	}
	switch d.peek() {
	case '}':
		d.i++
		return nil, false
	case 0:
		d.fail()
		return nil, false
	}
	if !first {
		d.expect(',')
	}
	key := d.name()
	d.expect(':')
	return key, !d.bad
}

// name reads a member name: a string of printable ASCII without escapes.
// Others (rare) go to the general path, which decodes and folds them as
// encoding/json does.
func (d *fastDecoder) name() []byte {
	d.expect('"')
	start := d.i
	for d.i < len(d.b) && plainByte[d.b[d.i]] {
		d.i++
	}
	if d.i == len(d.b) || d.b[d.i] != '"' {
		d.fail() // unterminated, or a byte the general path must judge
		return nil
	}
	d.i++
	return d.b[start : d.i-1]
}

// plainByte marks the bytes a string may hold as they are: printable
// ASCII but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// unknown skips the value of a member the server does not read, unless
// its name matches a known one case-insensitively.
func (d *fastDecoder) unknown(key []byte, known []string) {
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			d.fail()
			return
		}
	}
	d.raw()
}

// str reads a string value. One without escapes or non-ASCII bytes is
// taken as is; others are decoded by encoding/json, which also validates
// the escapes and replaces invalid UTF-8.
func (d *fastDecoder) str() string {
	if d.peek() != '"' {
		d.fail()
		return ""
	}
	start := d.i
	plain := true
	for d.i++; d.i < len(d.b); d.i++ {
		for d.i < len(d.b) && plainByte[d.b[d.i]] {
			d.i++ // the common bytes, one test each
		}
		if d.i == len(d.b) {
			break
		}
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			if plain {
				v := d.b[start+1 : d.i-1]
				if k, ok := knownStrings[string(v)]; ok {
					return k
				}
				return string(v)
			}
			var s string
			if json.Unmarshal(d.b[start:d.i], &s) != nil {
				d.fail()
			}
			return s
		case c == '\\':
			plain = false
			d.i++ // the escaped byte cannot end the string
		case c < 0x20:
			d.fail()
			return ""
		case c >= 0x80:
			plain = false
		}
	}
	d.fail()
	return ""
}

func (d *fastDecoder) strPtr() *string {
	s := d.str()
	return &s
}

// raw reads any value and returns its bytes, validated by json.Valid.
func (d *fastDecoder) raw() json.RawMessage {
	d.ws()
	start := d.i
	d.skip()
	v := d.b[start:d.i]
	if string(v) == "{}" {
		return v // the usual clientCapabilities, valid without a scanner
	}
	if len(v) == 0 || !json.Valid(v) {
		d.fail()
		return nil
	}
	return v
}

// maxSkipDepth keeps the fast path well below encoding/json's nesting
// limit (10,000 for the whole message), which json.Valid applies to a
// member value alone.
const maxSkipDepth = 9000

// skip moves past one value by its structure alone (strings, nesting);
// raw validates what it skipped.
func (d *fastDecoder) skip() {
	depth := 0
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '"':
			d.skipString()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			if depth++; depth > maxSkipDepth {
				d.fail() // near encoding/json's nesting limit: let it judge
				return
			}
		case '}', ']':
			if depth == 0 {
				return // the end of the enclosing object: a scalar ended
			}
			depth--
			if depth == 0 {
				d.i++
				return
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return
			}
		}
		d.i++
	}
}

// skipString moves past a string starting at d.i.
func (d *fastDecoder) skipString() {
	for d.i++; d.i < len(d.b); d.i++ {
		switch d.b[d.i] {
		case '"':
			d.i++
			return
		case '\\':
			d.i++
		}
	}
	d.i = len(d.b) // unterminated (raw refuses it)
}

// decodeRaw decodes a member the fast path does not read itself with
// encoding/json; a type mismatch goes to the general path.
func (d *fastDecoder) decodeRaw(v any) {
	raw := d.raw()
	if d.bad || raw[0] == 'n' || json.Unmarshal(raw, v) != nil {
		d.fail()
	}
}

// stringMap decodes an object of strings (prompt arguments) in one pass,
// or reports false when encoding/json must: anything malformed, a value
// that is not a string, a member name with escapes or non-ASCII bytes.
func stringMap(raw []byte) (map[string]string, bool) {
	d := &fastDecoder{b: raw}
	out := map[string]string{}
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			break
		}
		out[string(key)] = d.str() // a repeated name: the last wins, as in encoding/json
	}
	d.ws()
	if d.bad || d.i != len(d.b) {
		return nil, false
	}
	return out, true
}
