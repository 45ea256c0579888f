package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
)

// Pre-encoding of the manifest-declared resources by appending, byte for
// byte what encode (encoding/json without HTML escaping) writes: a Set of
// 100 plugins with 1,000 resources each encodes 100,000 of them on every
// reload. TestStaticResourceBytes and FuzzAppendString hold the two equal.

const hexDigits = "0123456789abcdef"

// plain[c] is true for the bytes that stand for themselves inside a JSON
// string: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: \b \f \n \r \t and \u00XX for control characters,
// \ufffd for each invalid UTF-8 byte, \u2028 and \u2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendRaw appends a json.RawMessage field as encoding/json does: checked
// to be JSON, without insignificant whitespace.
func appendRaw(b []byte, name string, raw json.RawMessage) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%s is not valid JSON", name)
	}
	return appendCompact(field(b, name), raw), nil
}

// appendStaticResource appends r as encode(r) would.
func appendStaticResource(b []byte, r *abi.Resource) ([]byte, error) {
	b = append(b, '{')
	b = appendString(field(b, "uri"), r.URI)
	b = appendString(field(b, "name"), r.Name)
	if r.Title != "" {
		b = appendString(field(b, "title"), r.Title)
	}
	if r.Description != "" {
		b = appendString(field(b, "description"), r.Description)
	}
	if r.MimeType != "" {
		b = appendString(field(b, "mimeType"), r.MimeType)
	}
	if r.Size != nil {
		b = strconv.AppendInt(field(b, "size"), *r.Size, 10)
	}
	var err error
	if len(r.Annotations) > 0 {
		if b, err = appendRaw(b, "annotations", r.Annotations); err != nil {
			return nil, fmt.Errorf("resource %q: %w", r.URI, err)
		}
	}
	if len(r.Icons) > 0 {
		if b, err = appendRaw(b, "icons", r.Icons); err != nil {
			return nil, fmt.Errorf("resource %q: %w", r.URI, err)
		}
	}
	return append(b, '}'), nil
}

// arena hands out copies cut from shared chunks, so that many small
// pre-encoded items are few allocations. The chunks double from 512 bytes
// to 64 KiB: a Set of one small plugin (each plugin's claims are checked
// in a Set of its own) does not pay for a big one.
type arena struct{ buf []byte }

func (a *arena) copy(b []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, max(min(64<<10, max(512, 2*cap(a.buf))), len(b)))
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
