package catalog

// Provider output handled by encoding/json: json.Unmarshal into the MCP
// structs after utf8.Valid, the same checks, and re-encoding with
// encoding/json. The reference the Fuzz*Output targets hold the strict
// reader to on output without repeated or case-folded member names.

import (
	"encoding/json"
	"unicode/utf8"
)

// oldDecodeStrict decodes provider output: valid UTF-8, one JSON value.
func oldDecodeStrict(data []byte, v any) error {
	if !utf8.Valid(data) {
		return outputErr("not valid UTF-8")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return outputErr("malformed JSON: %v", err)
	}
	return nil
}

// oldAnnotations is MCP Annotations.
type oldAnnotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

func oldCheckAnnotations(a *oldAnnotations) error {
	if a == nil {
		return nil
	}
	for _, r := range a.Audience {
		if r != "user" && r != "assistant" {
			return outputErr("oldAnnotations.audience has %q", r)
		}
	}
	if a.Priority != nil && (*a.Priority < 0 || *a.Priority > 1) {
		return outputErr("oldAnnotations.priority %v outside 0..1", *a.Priority)
	}
	return nil
}

// oldIcon is MCP Icon.
type oldIcon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

func oldCheckIcons(icons []oldIcon) error {
	for _, ic := range icons {
		if ic.Src == "" {
			return outputErr("oldIcon without src")
		}
		if ic.Theme != "" && ic.Theme != "light" && ic.Theme != "dark" {
			return outputErr("oldIcon theme %q", ic.Theme)
		}
	}
	return nil
}

// oldResource is MCP Resource.
type oldResource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations *oldAnnotations `json:"annotations,omitempty"`
	Icons       []oldIcon       `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// oldCheckResource validates r against the owner's schemes.
func (pr *provider) oldCheckResource(r *oldResource) error {
	if r.Name == "" {
		return outputErr("oldResource %q has no name", r.URI)
	}
	if err := pr.checkOwnURI(r.URI); err != nil {
		return err
	}
	if r.Size != nil && *r.Size < 0 {
		return outputErr("oldResource %q has a negative size", r.URI)
	}
	if !isObject(r.Meta) {
		return outputErr("oldResource %q: _meta is not an object", r.URI)
	}
	if err := oldCheckAnnotations(r.Annotations); err != nil {
		return err
	}
	return oldCheckIcons(r.Icons)
}

// oldResourceContents is MCP TextResourceContents | BlobResourceContents.
type oldResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func (pr *provider) oldCheckContents(c *oldResourceContents) (size int, err error) {
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

// oldContentBlock is MCP ContentBlock (text, image, audio, resource_link,
// oldResource), with every field any variant may carry.
type oldContentBlock struct {
	Type        string               `json:"type"`
	Text        *string              `json:"text,omitempty"`
	Data        *string              `json:"data,omitempty"`
	MimeType    string               `json:"mimeType,omitempty"`
	URI         string               `json:"uri,omitempty"`
	Name        string               `json:"name,omitempty"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	Size        *int64               `json:"size,omitempty"`
	Icons       []oldIcon            `json:"icons,omitempty"`
	Resource    *oldResourceContents `json:"resource,omitempty"`
	Annotations *oldAnnotations      `json:"annotations,omitempty"`
	Meta        json.RawMessage      `json:"_meta,omitempty"`
}

func (pr *provider) oldCheckBlock(b *oldContentBlock) error {
	if err := oldCheckAnnotations(b.Annotations); err != nil {
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
		return oldCheckIcons(b.Icons)
	case "resource":
		if b.Resource == nil || b.Text != nil || b.Data != nil || b.URI != "" {
			return outputErr("oldResource content needs an embedded oldResource only")
		}
		_, err := pr.oldCheckContents(b.Resource)
		return err
	default:
		return outputErr("unknown content type %q", b.Type)
	}
	return nil
}

// oldPromptMessage is MCP PromptMessage.
type oldPromptMessage struct {
	Role    string          `json:"role"`
	Content oldContentBlock `json:"content"`
}

type oldGetPromptResult struct {
	Description string             `json:"description,omitempty"`
	Messages    []oldPromptMessage `json:"messages"`
}

type oldCallToolResult struct {
	Content           []oldContentBlock `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// oldRead is ReadResource's output handling: 0, KindResourceNotFound or
// KindInternal, and the contents and ttlMs on success.
func (pr *provider) oldRead(out []byte, maxBytes int) ([]json.RawMessage, *int64, Kind) {
	var res struct {
		Contents []oldResourceContents `json:"contents"`
		TTLMs    *int64                `json:"ttlMs"`
	}
	if err := oldDecodeStrict(out, &res); err != nil {
		return nil, nil, KindInternal
	}
	if len(res.Contents) == 0 {
		return nil, nil, KindResourceNotFound
	}
	var items []json.RawMessage
	total := 0
	for i := range res.Contents {
		n, err := pr.oldCheckContents(&res.Contents[i])
		if err != nil {
			return nil, nil, KindInternal
		}
		if total += n; total > maxBytes {
			return nil, nil, KindInternal
		}
		b, err := encode(&res.Contents[i])
		if err != nil {
			return nil, nil, KindInternal
		}
		items = append(items, b)
	}
	return items, res.TTLMs, 0
}

// oldPrompt is GetPrompt's output handling.
func (pr *provider) oldPrompt(out []byte) (json.RawMessage, bool) {
	var res oldGetPromptResult
	if err := oldDecodeStrict(out, &res); err != nil || res.Messages == nil {
		return nil, false
	}
	for i := range res.Messages {
		m := &res.Messages[i]
		if m.Role != "user" && m.Role != "assistant" {
			return nil, false
		}
		if pr.oldCheckBlock(&m.Content) != nil {
			return nil, false
		}
	}
	b, err := encode(&res)
	return b, err == nil
}

// oldTool is CallTool's output handling.
func (pr *provider) oldTool(out []byte) (json.RawMessage, bool) {
	var res oldCallToolResult
	if err := oldDecodeStrict(out, &res); err != nil {
		return nil, false
	}
	if res.Content == nil {
		res.Content = []oldContentBlock{}
	}
	for i := range res.Content {
		if pr.oldCheckBlock(&res.Content[i]) != nil {
			return nil, false
		}
	}
	if len(res.StructuredContent) > 0 && !isObject(res.StructuredContent) {
		return nil, false
	}
	b, err := encode(&res)
	return b, err == nil
}

// oldList is listDynamic's output handling (no Policy).
func (pr *provider) oldList(out []byte, limit int) ([]json.RawMessage, string, bool) {
	var res struct {
		Resources  []oldResource `json:"resources"`
		NextCursor string        `json:"nextCursor"`
	}
	if err := oldDecodeStrict(out, &res); err != nil {
		return nil, "", false
	}
	if len(res.Resources) > limit || len(res.NextCursor) > maxInnerCursor || len(res.Resources) == 0 && res.NextCursor != "" {
		return nil, "", false
	}
	items := []json.RawMessage{}
	for i := range res.Resources {
		if pr.oldCheckResource(&res.Resources[i]) != nil {
			return nil, "", false
		}
		b, err := encode(&res.Resources[i])
		if err != nil {
			return nil, "", false
		}
		items = append(items, b)
	}
	return items, res.NextCursor, true
}
