package corral

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
)

// Annotations are MCP annotations for resources and content blocks.
type Annotations struct {
	// Audience is who the content is for: "user", "assistant" or both.
	Audience []string `json:"audience,omitempty"`
	// Priority is how important the content is, from 0 (least) to 1
	// (most); nil leaves it out.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp; see Timestamp.
	LastModified string `json:"lastModified,omitempty"`
}

// JSON encodes a, or returns nil when a is empty so that the field is
// omitted.
func (a Annotations) JSON() json.RawMessage {
	if len(a.Audience) == 0 && a.Priority == nil && a.LastModified == "" {
		return nil
	}
	b := make([]byte, 0, 64)
	b = append(b, '{')
	sep := false
	if len(a.Audience) > 0 {
		b = append(b, `"audience":[`...)
		for i, s := range a.Audience {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
		sep = true
	}
	if a.Priority != nil {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"priority":`...)
		b = strconv.AppendFloat(b, *a.Priority, 'g', -1, 64)
		sep = true
	}
	if a.LastModified != "" {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"lastModified":`...)
		b = appendString(b, a.LastModified)
	}
	return append(b, '}')
}

// Priority returns a pointer to p for Annotations.Priority.
func Priority(p float64) *float64 { return &p }

// Timestamp formats t as the ISO 8601 (RFC 3339, UTC) string MCP uses for
// lastModified.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// TextContents returns MCP TextResourceContents for a resource read.
func TextContents(uri, mimeType, text string) json.RawMessage {
	b := make([]byte, 0, len(uri)+len(mimeType)+len(text)+40)
	b = append(b, `{"uri":`...)
	b = appendString(b, uri)
	if mimeType != "" {
		b = append(b, `,"mimeType":`...)
		b = appendString(b, mimeType)
	}
	b = append(b, `,"text":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// BlobContents returns MCP BlobResourceContents: data encoded as standard
// base64.
func BlobContents(uri, mimeType string, data []byte) json.RawMessage {
	b := make([]byte, 0, len(uri)+len(mimeType)+base64.StdEncoding.EncodedLen(len(data))+40)
	b = append(b, `{"uri":`...)
	b = appendString(b, uri)
	if mimeType != "" {
		b = append(b, `,"mimeType":`...)
		b = appendString(b, mimeType)
	}
	b = append(b, `,"blob":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, `"}`...)
}

// Contents returns a read result holding contents.
func Contents(contents ...json.RawMessage) *abi.ReadResourceResult {
	return &abi.ReadResourceResult{Contents: contents}
}

// Text returns a text content block.
func Text(text string) json.RawMessage {
	b := make([]byte, 0, len(text)+26)
	b = append(b, `{"type":"text","text":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// Image returns an image content block; data is base64-encoded.
func Image(data []byte, mimeType string) json.RawMessage { return media("image", data, mimeType) }

// Audio returns an audio content block; data is base64-encoded.
func Audio(data []byte, mimeType string) json.RawMessage { return media("audio", data, mimeType) }

func media(kind string, data []byte, mimeType string) json.RawMessage {
	b := make([]byte, 0, base64.StdEncoding.EncodedLen(len(data))+len(mimeType)+40)
	b = append(b, `{"type":"`...)
	b = append(b, kind...)
	b = append(b, `","data":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	b = append(b, `","mimeType":`...)
	b = appendString(b, mimeType)
	return append(b, '}')
}

// EmbeddedResource returns a "resource" content block embedding contents
// built with TextContents or BlobContents.
func EmbeddedResource(contents json.RawMessage) json.RawMessage {
	b := make([]byte, 0, len(contents)+32)
	b = append(b, `{"type":"resource","resource":`...)
	b = append(b, contents...)
	return append(b, '}')
}

// ResourceLink returns a "resource_link" content block pointing at r.
func ResourceLink(r abi.Resource) json.RawMessage {
	body, err := json.Marshal(&r)
	if err != nil || len(body) < 2 {
		// Only invalid raw JSON in Annotations or Icons fails to encode;
		// link by URI and name alone then.
		b := append([]byte(`{"type":"resource_link","uri":`), appendString(nil, r.URI)...)
		b = append(b, `,"name":`...)
		b = appendString(b, r.Name)
		return append(b, '}')
	}
	b := make([]byte, 0, len(body)+24)
	b = append(b, `{"type":"resource_link",`...)
	return append(b, body[1:]...)
}

// WithAnnotations returns the JSON object block with an "annotations"
// member added (nothing is added when a is empty). block must be a JSON
// object such as one returned by Text or EmbeddedResource.
func WithAnnotations(block json.RawMessage, a Annotations) json.RawMessage {
	ann := a.JSON()
	if ann == nil || len(block) < 2 || block[len(block)-1] != '}' {
		return block
	}
	b := make([]byte, 0, len(block)+len(ann)+16)
	b = append(b, block[:len(block)-1]...)
	if len(block) > 2 {
		b = append(b, ',')
	}
	b = append(b, `"annotations":`...)
	b = append(b, ann...)
	return append(b, '}')
}

// Message returns an MCP PromptMessage with role "user" or "assistant".
func Message(role string, content json.RawMessage) json.RawMessage {
	b := make([]byte, 0, len(content)+len(role)+24)
	b = append(b, `{"role":`...)
	b = appendString(b, role)
	b = append(b, `,"content":`...)
	b = append(b, content...)
	return append(b, '}')
}

// UserMessage returns a prompt message from the user.
func UserMessage(content json.RawMessage) json.RawMessage { return Message("user", content) }

// AssistantMessage returns a prompt message from the assistant.
func AssistantMessage(content json.RawMessage) json.RawMessage {
	return Message("assistant", content)
}

// Messages returns a prompt result.
func Messages(description string, messages ...json.RawMessage) *abi.GetPromptResult {
	return &abi.GetPromptResult{Description: description, Messages: messages}
}

// ToolResult returns a successful tool result with the content blocks.
func ToolResult(content ...json.RawMessage) *abi.CallToolResult {
	return &abi.CallToolResult{Content: content}
}

// ToolText returns a successful tool result holding one text block.
func ToolText(text string) *abi.CallToolResult { return ToolResult(Text(text)) }

// ToolError returns a failed tool result (isError) explaining why.
func ToolError(text string) *abi.CallToolResult {
	return &abi.CallToolResult{Content: []json.RawMessage{Text(text)}, IsError: true}
}

const hexDigits = "0123456789abcdef"

// SWAR constants: every byte 0x01, every byte 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the 8 bytes of s (len(s) == 8) are all ASCII,
// none a control character, '"' or '\\', so JSON copies them as they are.
// It tests all eight at once with the has-zero-byte and has-less-than
// bit tricks on one 64-bit word.
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	if x&highs != 0 { // non-ASCII
		return false
	}
	less := (x - 0x20*ones) & ^x & highs // some byte < 0x20
	q := x ^ ('"' * ones)
	quote := (q - ones) & ^q & highs // some byte == '"'
	bs := x ^ ('\\' * ones)
	slash := (bs - ones) & ^bs & highs // some byte == '\\'
	return less|quote|slash == 0
}

// appendString appends s to b as a JSON string. Invalid UTF-8 becomes
// U+FFFD; control characters are escaped; HTML characters are not.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Fast path: skip 8 plain bytes per iteration. Every loop
		// iteration of a guest carries the host's interrupt check, so a
		// 1 KiB text costs 128 of them, not 1,024.
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript parsers.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
