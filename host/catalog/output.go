package catalog

import (
	"strconv"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// The MCP shapes a provider's output is decoded into (with jdec), checked
// (validate.go) and encoded from (append functions here, field order and
// omitempty as encoding/json would write the same structs). Strings keep
// the provider's bytes, so a text is scanned once and copied once.

var (
	readResultFields  = jsonread.NewNames("contents", "ttlMs")
	contentsFields    = jsonread.NewNames("uri", "mimeType", "text", "blob", "_meta")
	annotationsFields = jsonread.NewNames("audience", "priority", "lastModified")
	iconFields        = jsonread.NewNames("src", "mimeType", "sizes", "theme")
	resourceFields    = jsonread.NewNames("uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta")
	blockFields       = jsonread.NewNames("type", "text", "data", "mimeType", "uri", "name", "title", "description", "size", "icons", "resource", "annotations", "_meta")
	messageFields     = jsonread.NewNames("role", "content")
	promptFields      = jsonread.NewNames("description", "messages")
	toolFields        = jsonread.NewNames("content", "structuredContent", "isError")
	listFields        = jsonread.NewNames("resources", "nextCursor")
	completeFields    = jsonread.NewNames("completion")
	completionFields  = jsonread.NewNames("values", "total", "hasMore")
)

// The readers of whole answers (readResult, listResult, getPromptResult,
// callToolResult, completeResult) read the value and what follows it.

// readResult is the answer to read_resource.
type readResult struct {
	Contents []resourceContents
	TTLMs    *int64
}

func (d jdec) readResult(r *readResult) error {
	d.Object("read result", readResultFields, func(i int, _ []byte) {
		switch i {
		case 0:
			r.Contents = slice(d, r.Contents, "contents", d.resourceContents)
		case 1:
			optInt(d, &r.TTLMs, "ttlMs")
		default:
			d.Skip()
		}
	})
	return d.end()
}

// resourceContents is MCP TextResourceContents | BlobResourceContents.
type resourceContents struct {
	URI, MimeType jstr
	Text, Blob    jstr // ok when present
	Meta          []byte
}

func (d jdec) resourceContents(c *resourceContents) {
	d.Object("resource contents", contentsFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.string(&c.URI, "uri")
		case 1:
			d.string(&c.MimeType, "mimeType")
		case 2:
			d.optString(&c.Text, "text")
		case 3:
			d.optString(&c.Blob, "blob")
		case 4:
			d.raw(&c.Meta)
		default:
			d.Skip()
		}
	})
}

func (c *resourceContents) appendTo(b []byte) []byte {
	b = append(b, '{')
	b = c.URI.appendTo(field(b, "uri"))
	if !c.MimeType.Empty() {
		b = c.MimeType.appendTo(field(b, "mimeType"))
	}
	if c.Text.Present() {
		b = c.Text.appendTo(field(b, "text"))
	}
	if c.Blob.Present() {
		b = c.Blob.appendTo(field(b, "blob"))
	}
	if len(c.Meta) > 0 {
		b = appendCompact(field(b, "_meta"), c.Meta)
	}
	return append(b, '}')
}

// annotations is MCP Annotations.
type annotations struct {
	Audience     []jstr
	Priority     jnum
	LastModified jstr
}

func (d jdec) annotations(a **annotations) {
	if d.Null() {
		*a = nil
		return
	}
	if *a == nil {
		*a = new(annotations)
	}
	d.Object("annotations", annotationsFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.strings(&(*a).Audience, "audience")
		case 1:
			d.optNumber(&(*a).Priority, "priority")
		case 2:
			d.string(&(*a).LastModified, "lastModified")
		default:
			d.Skip()
		}
	})
}

func (a *annotations) appendTo(b []byte) []byte {
	b = append(b, '{')
	if len(a.Audience) > 0 {
		b = appendStrings(field(b, "audience"), a.Audience)
	}
	if a.Priority.ok {
		b = append(field(b, "priority"), a.Priority.raw...)
	}
	if !a.LastModified.Empty() {
		b = a.LastModified.appendTo(field(b, "lastModified"))
	}
	return append(b, '}')
}

func appendStrings(b []byte, ss []jstr) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendTo(b)
	}
	return append(b, ']')
}

// icon is MCP Icon.
type icon struct {
	Src, MimeType jstr
	Sizes         []jstr
	Theme         jstr
}

func (d jdec) icon(ic *icon) {
	d.Object("icon", iconFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.string(&ic.Src, "src")
		case 1:
			d.string(&ic.MimeType, "mimeType")
		case 2:
			d.strings(&ic.Sizes, "sizes")
		case 3:
			d.string(&ic.Theme, "theme")
		default:
			d.Skip()
		}
	})
}

func appendIcons(b []byte, icons []icon) []byte {
	b = append(b, '[')
	for i := range icons {
		ic := &icons[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = ic.Src.appendTo(field(b, "src"))
		if !ic.MimeType.Empty() {
			b = ic.MimeType.appendTo(field(b, "mimeType"))
		}
		if len(ic.Sizes) > 0 {
			b = appendStrings(field(b, "sizes"), ic.Sizes)
		}
		if !ic.Theme.Empty() {
			b = ic.Theme.appendTo(field(b, "theme"))
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// resource is MCP Resource (a listed one).
type resource struct {
	URI, Name, Title, Description, MimeType jstr
	Size                                    *int64
	Annotations                             *annotations
	Icons                                   []icon
	Meta                                    []byte
}

func (d jdec) resource(r *resource) {
	d.Object("resource", resourceFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.string(&r.URI, "uri")
		case 1:
			d.string(&r.Name, "name")
		case 2:
			d.string(&r.Title, "title")
		case 3:
			d.string(&r.Description, "description")
		case 4:
			d.string(&r.MimeType, "mimeType")
		case 5:
			optInt(d, &r.Size, "size")
		case 6:
			d.annotations(&r.Annotations)
		case 7:
			r.Icons = slice(d, r.Icons, "icons", d.icon)
		case 8:
			d.raw(&r.Meta)
		default:
			d.Skip()
		}
	})
}

func (r *resource) appendTo(b []byte) []byte {
	b = append(b, '{')
	b = r.URI.appendTo(field(b, "uri"))
	b = r.Name.appendTo(field(b, "name"))
	for _, f := range [...]struct {
		name string
		s    *jstr
	}{{"title", &r.Title}, {"description", &r.Description}, {"mimeType", &r.MimeType}} {
		if !f.s.Empty() {
			b = f.s.appendTo(field(b, f.name))
		}
	}
	if r.Size != nil {
		b = strconv.AppendInt(field(b, "size"), *r.Size, 10)
	}
	if r.Annotations != nil {
		b = r.Annotations.appendTo(field(b, "annotations"))
	}
	if len(r.Icons) > 0 {
		b = appendIcons(field(b, "icons"), r.Icons)
	}
	if len(r.Meta) > 0 {
		b = appendCompact(field(b, "_meta"), r.Meta)
	}
	return append(b, '}')
}

// listResult is the answer to list_resources.
type listResult struct {
	Resources  []resource
	NextCursor jstr
}

func (d jdec) listResult(r *listResult) error {
	d.Object("list result", listFields, func(i int, _ []byte) {
		switch i {
		case 0:
			r.Resources = slice(d, r.Resources, "resources", d.resource)
		case 1:
			d.string(&r.NextCursor, "nextCursor")
		default:
			d.Skip()
		}
	})
	return d.end()
}

// contentBlock is MCP ContentBlock (text, image, audio, resource_link,
// resource), with every field any variant may carry.
type contentBlock struct {
	Type                                    jstr
	Text, Data                              jstr // ok when present
	MimeType, URI, Name, Title, Description jstr
	Size                                    *int64
	Icons                                   []icon
	Resource                                *resourceContents
	Annotations                             *annotations
	Meta                                    []byte
}

func (d jdec) contentBlock(c *contentBlock) {
	d.Object("content block", blockFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.string(&c.Type, "type")
		case 1:
			d.optString(&c.Text, "text")
		case 2:
			d.optString(&c.Data, "data")
		case 3:
			d.string(&c.MimeType, "mimeType")
		case 4:
			d.string(&c.URI, "uri")
		case 5:
			d.string(&c.Name, "name")
		case 6:
			d.string(&c.Title, "title")
		case 7:
			d.string(&c.Description, "description")
		case 8:
			optInt(d, &c.Size, "size")
		case 9:
			c.Icons = slice(d, c.Icons, "icons", d.icon)
		case 10:
			if d.Null() {
				c.Resource = nil
				return
			}
			if c.Resource == nil {
				c.Resource = new(resourceContents)
			}
			d.resourceContents(c.Resource)
		case 11:
			d.annotations(&c.Annotations)
		case 12:
			d.raw(&c.Meta)
		default:
			d.Skip()
		}
	})
}

func (c *contentBlock) appendTo(b []byte) []byte {
	b = append(b, '{')
	b = c.Type.appendTo(field(b, "type"))
	if c.Text.Present() {
		b = c.Text.appendTo(field(b, "text"))
	}
	if c.Data.Present() {
		b = c.Data.appendTo(field(b, "data"))
	}
	for _, f := range [...]struct {
		name string
		s    *jstr
	}{{"mimeType", &c.MimeType}, {"uri", &c.URI}, {"name", &c.Name}, {"title", &c.Title}, {"description", &c.Description}} {
		if !f.s.Empty() {
			b = f.s.appendTo(field(b, f.name))
		}
	}
	if c.Size != nil {
		b = strconv.AppendInt(field(b, "size"), *c.Size, 10)
	}
	if len(c.Icons) > 0 {
		b = appendIcons(field(b, "icons"), c.Icons)
	}
	if c.Resource != nil {
		b = c.Resource.appendTo(field(b, "resource"))
	}
	if c.Annotations != nil {
		b = c.Annotations.appendTo(field(b, "annotations"))
	}
	if len(c.Meta) > 0 {
		b = appendCompact(field(b, "_meta"), c.Meta)
	}
	return append(b, '}')
}

// promptMessage is MCP PromptMessage.
type promptMessage struct {
	Role    jstr
	Content contentBlock
}

// getPromptResult is MCP GetPromptResult without resultType.
type getPromptResult struct {
	Description jstr
	Messages    []promptMessage
}

func (d jdec) getPromptResult(r *getPromptResult) error {
	d.Object("prompt result", promptFields, func(i int, _ []byte) {
		switch i {
		case 0:
			d.string(&r.Description, "description")
		case 1:
			r.Messages = slice(d, r.Messages, "messages", func(m *promptMessage) {
				d.Object("prompt message", messageFields, func(i int, _ []byte) {
					switch i {
					case 0:
						d.string(&m.Role, "role")
					case 1:
						d.contentBlock(&m.Content)
					default:
						d.Skip()
					}
				})
			})
		default:
			d.Skip()
		}
	})
	return d.end()
}

func (r *getPromptResult) appendTo(b []byte) []byte {
	b = append(b, '{')
	if !r.Description.Empty() {
		b = r.Description.appendTo(field(b, "description"))
	}
	b = append(field(b, "messages"), '[')
	for i := range r.Messages {
		m := &r.Messages[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = m.Role.appendTo(field(append(b, '{'), "role"))
		b = m.Content.appendTo(field(b, "content"))
		b = append(b, '}')
	}
	return append(b, ']', '}')
}

// callToolResult is MCP CallToolResult without resultType.
type callToolResult struct {
	Content           []contentBlock
	StructuredContent []byte
	IsError           bool
}

func (d jdec) callToolResult(r *callToolResult) error {
	d.Object("tool result", toolFields, func(i int, _ []byte) {
		switch i {
		case 0:
			r.Content = slice(d, r.Content, "content", d.contentBlock)
		case 1:
			d.raw(&r.StructuredContent)
		case 2:
			d.boolean(&r.IsError, "isError")
		default:
			d.Skip()
		}
	})
	return d.end()
}

func (r *callToolResult) appendTo(b []byte) []byte {
	b = append(field(append(b, '{'), "content"), '[')
	for i := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.Content[i].appendTo(b)
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		b = appendCompact(field(b, "structuredContent"), r.StructuredContent)
	}
	if r.IsError {
		b = append(field(b, "isError"), "true"...)
	}
	return append(b, '}')
}

// completeResult decodes abi.CompleteResult. The values are cut from one
// string copy of the output: one allocation for all of them.
func (d jdec) completeResult(r *abi.CompleteResult) error {
	all := string(d.Bytes())
	d.Object("completion result", completeFields, func(i int, _ []byte) {
		if i != 0 {
			d.Skip()
			return
		}
		c := &r.Completion
		d.Object("completion", completionFields, func(i int, _ []byte) {
			switch i {
			case 0:
				c.Values = slice(d, c.Values, "values", func(v *string) {
					switch s := d.String("values"); {
					case !s.Present(): // null: as it was
					case s.Escaped():
						*v = s.String()
					default: // a slice of the one copy: the literal just read
						end := d.Offset() - 1
						*v = all[end-len(s.Raw)+2 : end]
					}
				})
			case 1:
				optInt(d, &c.Total, "total")
			case 2:
				d.boolean(&c.HasMore, "hasMore")
			default:
				d.Skip()
			}
		})
	})
	return d.end()
}
