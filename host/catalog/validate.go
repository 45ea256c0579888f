package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Validation of provider output. A provider is untrusted: whatever it
// returns is decoded into the exact MCP shape, checked, and re-encoded, so
// a client only ever sees well-formed JSON with valid UTF-8 text, valid
// base64 and URIs inside the provider's own schemes. Re-encoding also drops
// unknown fields and duplicate keys, so what was checked is what is sent.

// errOutput marks invalid provider output.
var errOutput = errors.New("invalid output")

func outputErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errOutput, fmt.Sprintf(format, args...))
}

// decodeStrict decodes provider output: valid UTF-8, one JSON value.
func decodeStrict(data []byte, v any) error {
	if !utf8.Valid(data) {
		return outputErr("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return outputErr("malformed JSON: %v", err)
	}
	if dec.More() {
		return outputErr("trailing data after JSON value")
	}
	return nil
}

// encode marshals v without HTML escaping.
func encode(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// validBase64 reports whether s is padded standard base64.
func validBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		case c == '=':
			// padding: only in the last two positions, and nothing after it
			if i < len(s)-2 || (i == len(s)-2 && s[len(s)-1] != '=') {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isObject reports whether raw is absent or a JSON object.
func isObject(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// annotations is MCP Annotations.
type annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

func checkAnnotations(a *annotations) error {
	if a == nil {
		return nil
	}
	for _, r := range a.Audience {
		if r != "user" && r != "assistant" {
			return outputErr("annotations.audience has %q", r)
		}
	}
	if a.Priority != nil && (*a.Priority < 0 || *a.Priority > 1) {
		return outputErr("annotations.priority %v outside 0..1", *a.Priority)
	}
	return nil
}

// icon is MCP Icon.
type icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

func checkIcons(icons []icon) error {
	for _, ic := range icons {
		if ic.Src == "" {
			return outputErr("icon without src")
		}
		if ic.Theme != "" && ic.Theme != "light" && ic.Theme != "dark" {
			return outputErr("icon theme %q", ic.Theme)
		}
	}
	return nil
}

// resource is MCP Resource.
type resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations *annotations    `json:"annotations,omitempty"`
	Icons       []icon          `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// checkResource validates r against the owner's schemes.
func (pr *provider) checkResource(r *resource) error {
	if r.Name == "" {
		return outputErr("resource %q has no name", r.URI)
	}
	if err := pr.checkOwnURI(r.URI); err != nil {
		return err
	}
	if r.Size != nil && *r.Size < 0 {
		return outputErr("resource %q has a negative size", r.URI)
	}
	if !isObject(r.Meta) {
		return outputErr("resource %q: _meta is not an object", r.URI)
	}
	if err := checkAnnotations(r.Annotations); err != nil {
		return err
	}
	return checkIcons(r.Icons)
}

// checkOwnURI checks that uri is valid and inside the provider's schemes.
func (pr *provider) checkOwnURI(uri string) error {
	scheme, err := ValidateURI(uri)
	if err != nil {
		return outputErr("URI %q is not valid", uri)
	}
	if !slices.Contains(pr.schemes, scheme) {
		return outputErr("URI %q is outside the plugin's schemes %v", uri, pr.schemes)
	}
	return nil
}

// resourceContents is MCP TextResourceContents | BlobResourceContents.
type resourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func (pr *provider) checkContents(c *resourceContents) (size int, err error) {
	if err := pr.checkOwnURI(c.URI); err != nil {
		return 0, err
	}
	switch {
	case c.Text != nil && c.Blob != nil:
		return 0, outputErr("contents of %q have both text and blob", c.URI)
	case c.Text != nil:
		size = len(*c.Text)
	case c.Blob != nil:
		if !validBase64(*c.Blob) {
			return 0, outputErr("contents of %q: blob is not valid base64", c.URI)
		}
		size = len(*c.Blob)
	default:
		return 0, outputErr("contents of %q have neither text nor blob", c.URI)
	}
	if !isObject(c.Meta) {
		return 0, outputErr("contents of %q: _meta is not an object", c.URI)
	}
	return size, nil
}

// contentBlock is MCP ContentBlock (text, image, audio, resource_link,
// resource), with every field any variant may carry.
type contentBlock struct {
	Type        string            `json:"type"`
	Text        *string           `json:"text,omitempty"`
	Data        *string           `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Icons       []icon            `json:"icons,omitempty"`
	Resource    *resourceContents `json:"resource,omitempty"`
	Annotations *annotations      `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

func (pr *provider) checkBlock(b *contentBlock) error {
	if err := checkAnnotations(b.Annotations); err != nil {
		return err
	}
	if !isObject(b.Meta) {
		return outputErr("content block: _meta is not an object")
	}
	switch b.Type {
	case "text":
		if b.Text == nil || b.Data != nil || b.Resource != nil || b.URI != "" {
			return outputErr("text content must carry only text")
		}
	case "image", "audio":
		if b.Data == nil || b.MimeType == "" || b.Text != nil || b.Resource != nil || b.URI != "" {
			return outputErr("%s content needs data and mimeType only", b.Type)
		}
		if !validBase64(*b.Data) {
			return outputErr("%s content: data is not valid base64", b.Type)
		}
	case "resource_link":
		if b.URI == "" || b.Name == "" || b.Text != nil || b.Data != nil || b.Resource != nil {
			return outputErr("resource_link needs uri and name only")
		}
		if _, err := ValidateURI(b.URI); err != nil {
			return outputErr("resource_link URI %q is not valid", b.URI)
		}
		return checkIcons(b.Icons)
	case "resource":
		if b.Resource == nil || b.Text != nil || b.Data != nil || b.URI != "" {
			return outputErr("resource content needs an embedded resource only")
		}
		_, err := pr.checkContents(b.Resource)
		return err
	default:
		return outputErr("unknown content type %q", b.Type)
	}
	return nil
}

// promptMessage is MCP PromptMessage.
type promptMessage struct {
	Role    string       `json:"role"`
	Content contentBlock `json:"content"`
}

type getPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []promptMessage `json:"messages"`
}

type callToolResult struct {
	Content           []contentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}
