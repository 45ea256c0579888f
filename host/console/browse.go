package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/yosida95/uritemplate/v3"
)

// browseTimeout bounds one console request's calls into the catalog.
const browseTimeout = 30 * time.Second

// request is the catalog request of a console request: the principal it
// browses as, and no client input (a prompt that asks the client for
// input answers with an error).
func (c *Console) request(r *http.Request) catalog.Request {
	return catalog.Request{Principal: c.principal(r)}
}

// resourceItem is a resource as resources/list names it.
type resourceItem struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
}

// templateItem is a resource template with its variables.
type templateItem struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Vars        []string
}

// promptItem is a prompt as prompts/list names it.
type promptItem struct {
	Name        string               `json:"name"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	Arguments   []abi.PromptArgument `json:"arguments"`
}

// listPage is one page of a list and the cursor of the next.
type listPage[T any] struct {
	Items []T
	Next  string
	Error string
}

// listOf reads one page of a merged list as the console's principal.
func listOf[T any](ctx context.Context, c *Console, r *http.Request, kind catalog.ListKind, cursor string) listPage[T] {
	var out listPage[T]
	page, err := c.opts.Registry.Catalog().Current().List(ctx, c.request(r), kind, cursor)
	if err != nil {
		out.Error = c.safeError(err)
		return out
	}
	for _, raw := range page.Items {
		var it T
		if err := json.Unmarshal(raw, &it); err != nil {
			c.log.Warn("console: list item", "kind", kind.String(), "err", err)
			continue
		}
		out.Items = append(out.Items, it)
	}
	if page.NextCursor != nil {
		out.Next = *page.NextCursor
	}
	return out
}

// safeError is what an error from the catalog may show: its message and
// what it names, or a generic sentence (the cause goes to the log).
func (c *Console) safeError(err error) string {
	if ce := catalog.AsError(err); ce != nil {
		msg := ce.Message
		if ce.URI != "" {
			msg += ": " + ce.URI
		} else if ce.Name != "" {
			msg += ": " + ce.Name
		}
		return msg
	}
	var mc *catalog.MissingCapabilityError
	if errors.As(err, &mc) {
		return "This needs input from the client (" + string(mc.Required) + "), which the console cannot give."
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "The request did not finish in time."
	}
	c.log.Warn("console: catalog request", "err", err)
	return "Internal error (see the server log)."
}

type resourcesView struct {
	Resources listPage[resourceItem]
	Templates listPage[templateItem]
	Cursor    string
}

func (c *Console) resources(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), browseTimeout)
	defer cancel()
	cursor := r.URL.Query().Get("cursor")
	v := resourcesView{Resources: listOf[resourceItem](ctx, c, r, catalog.ListResources, cursor), Cursor: cursor}
	if cursor == "" {
		v.Templates = listOf[templateItem](ctx, c, r, catalog.ListTemplates, "")
		for i := range v.Templates.Items {
			t := &v.Templates.Items[i]
			if tmpl, err := uritemplate.New(t.URITemplate); err == nil {
				t.Vars = tmpl.Varnames()
			}
		}
	}
	c.render(w, r, "resources.html", "Resources", "resources", v)
}

// content is one item of a read's contents, ready to show.
type content struct {
	URI, MimeType string
	Text          *string
	Blob          *string
	Image         template.URL // a data: URL, for raster images only
	Size          int          // bytes of a blob
	Index         int
}

type readView struct {
	URI      string
	Template string
	Contents []content
	Error    string
}

// imageTypes are the blob types shown as images: raster formats only
// (an SVG could carry script).
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// target is the URI a read names: uri, or template filled with the
// request's v.NAME values (RFC 6570 expansion, as a client would).
func target(r *http.Request) (uri, tmpl string, err error) {
	q := r.URL.Query()
	tmpl = q.Get("template")
	if tmpl == "" {
		return q.Get("uri"), "", nil
	}
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return "", tmpl, errors.New("console: not a URI template: " + tmpl)
	}
	vals := uritemplate.Values{}
	for _, name := range t.Varnames() {
		if v := q.Get("v." + name); v != "" {
			vals.Set(name, uritemplate.String(v))
		}
	}
	uri, err = t.Expand(vals)
	if err != nil {
		return "", tmpl, errors.New("console: cannot fill " + tmpl)
	}
	return uri, tmpl, nil
}

func (c *Console) readContents(r *http.Request, uri string) ([]content, error) {
	ctx, cancel := context.WithTimeout(r.Context(), browseTimeout)
	defer cancel()
	res, err := c.opts.Registry.Catalog().Current().ReadResource(ctx, c.request(r), uri)
	if err != nil {
		return nil, err
	}
	var out []content
	for i, raw := range res.Contents {
		var it struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, err
		}
		ct := content{URI: it.URI, MimeType: it.MimeType, Text: it.Text, Blob: it.Blob, Index: i}
		if it.Blob != nil {
			b, err := base64.StdEncoding.DecodeString(*it.Blob)
			if err != nil {
				return nil, err
			}
			ct.Size = len(b)
			if slices.Contains(imageTypes, strings.ToLower(it.MimeType)) {
				ct.Image = template.URL("data:" + strings.ToLower(it.MimeType) + ";base64," + *it.Blob)
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

func (c *Console) read(w http.ResponseWriter, r *http.Request) {
	uri, tmpl, err := target(r)
	v := readView{URI: uri, Template: tmpl}
	status := http.StatusOK
	if err != nil {
		v.Error, status = err.Error(), http.StatusBadRequest
	} else if uri == "" {
		v.Error, status = "Name a resource: ?uri=…", http.StatusBadRequest
	} else if v.Contents, err = c.readContents(r, uri); err != nil {
		v.Error, status = c.safeError(err), http.StatusOK
	}
	c.renderStatus(w, r, status, "read.html", "Read "+uri, "resources", v)
}

// unsafeName matches what may not appear in a download's file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// download serves one blob of a read as an attachment, never as a page.
func (c *Console) download(w http.ResponseWriter, r *http.Request) {
	uri := r.URL.Query().Get("uri")
	i, err := strconv.Atoi(r.URL.Query().Get("i"))
	if uri == "" || err != nil {
		c.failure(w, r, http.StatusBadRequest, "Name a resource and a content: ?uri=…&i=0")
		return
	}
	contents, err := c.readContents(r, uri)
	if err != nil {
		c.failure(w, r, http.StatusNotFound, c.safeError(err))
		return
	}
	if i < 0 || i >= len(contents) || contents[i].Blob == nil {
		c.failure(w, r, http.StatusNotFound, "The resource has no binary content "+strconv.Itoa(i)+".")
		return
	}
	b, _ := base64.StdEncoding.DecodeString(*contents[i].Blob) // checked by readContents
	name := uri
	if k := strings.LastIndexByte(strings.TrimRight(name, "/"), '/'); k >= 0 {
		name = name[k+1:]
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "_"), "._")
	if name == "" {
		name = "resource"
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Security-Policy", "sandbox")
	_, _ = w.Write(b)
}

type promptsView struct {
	Prompts listPage[promptItem]
	Cursor  string
}

func (c *Console) prompts(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), browseTimeout)
	defer cancel()
	cursor := r.URL.Query().Get("cursor")
	c.render(w, r, "prompts.html", "Prompts", "prompts", promptsView{Prompts: listOf[promptItem](ctx, c, r, catalog.ListPrompts, cursor), Cursor: cursor})
}

// message is one message of a prompt's result, ready to show.
type message struct {
	Role    string
	Type    string
	Text    string
	Image   template.URL
	Mime    string
	URI     string // an embedded or linked resource
	Unknown string // a content type the console does not render: its JSON
}

type promptView struct {
	Name        string
	Args        map[string]string
	Description string
	Messages    []message
	Error       string
}

func (c *Console) runPrompt(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		c.failure(w, r, http.StatusBadRequest, "Unreadable form.")
		return
	}
	v := promptView{Name: r.PostForm.Get("name"), Args: map[string]string{}}
	for k, vs := range r.PostForm {
		if a, ok := strings.CutPrefix(k, "a."); ok && len(vs) > 0 && vs[0] != "" {
			v.Args[a] = vs[0]
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), browseTimeout)
	defer cancel()
	raw, err := c.opts.Registry.Catalog().Current().GetPrompt(ctx, c.request(r), v.Name, v.Args)
	if err != nil {
		v.Error = c.safeError(err)
	} else if v.Description, v.Messages, err = messages(raw); err != nil {
		v.Error = "The prompt's result could not be read."
		c.log.Warn("console: prompt result", "err", err)
	}
	c.render(w, r, "prompt.html", "Prompt "+v.Name, "prompts", v)
}

// messages decodes a GetPromptResult for display.
func messages(raw json.RawMessage) (string, []message, error) {
	var res struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", nil, err
	}
	var out []message
	for _, m := range res.Messages {
		var ct struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			URI      string `json:"uri"`
			Resource *struct {
				URI      string  `json:"uri"`
				MimeType string  `json:"mimeType"`
				Text     *string `json:"text"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(m.Content, &ct); err != nil {
			return "", nil, err
		}
		msg := message{Role: m.Role, Type: ct.Type, Mime: ct.MimeType}
		switch ct.Type {
		case "text":
			msg.Text = ct.Text
		case "image":
			if slices.Contains(imageTypes, strings.ToLower(ct.MimeType)) {
				if _, err := base64.StdEncoding.DecodeString(ct.Data); err == nil {
					msg.Image = template.URL("data:" + strings.ToLower(ct.MimeType) + ";base64," + ct.Data)
				}
			}
		case "resource":
			if ct.Resource != nil {
				msg.URI, msg.Mime = ct.Resource.URI, ct.Resource.MimeType
				if ct.Resource.Text != nil {
					msg.Text = *ct.Resource.Text
				}
			}
		case "resource_link":
			msg.URI = ct.URI
		default:
			msg.Unknown = string(m.Content)
		}
		out = append(out, msg)
	}
	return res.Description, out, nil
}

// complete answers the page's completion requests: the values for one
// argument of a prompt (type ref/prompt, ref its name) or one variable of
// a template (ref/resource, ref the template), as JSON.
func (c *Console) complete(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ref := abi.CompleteRef{Type: q.Get("type")}
	switch ref.Type {
	case "ref/prompt":
		ref.Name = q.Get("ref")
	case "ref/resource":
		ref.URI = q.Get("ref")
	default:
		http.Error(w, "console: type must be ref/prompt or ref/resource", http.StatusBadRequest)
		return
	}
	ctxArgs := map[string]string{}
	for k, vs := range q {
		if a, ok := strings.CutPrefix(k, "ctx."); ok && len(vs) > 0 {
			ctxArgs[a] = vs[0]
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), browseTimeout)
	defer cancel()
	out := struct {
		Values []string `json:"values"`
		Error  string   `json:"error,omitempty"`
	}{Values: []string{}}
	comp, err := c.opts.Registry.Catalog().Current().Complete(ctx, c.request(r), ref,
		abi.CompleteArgument{Name: q.Get("arg"), Value: q.Get("value")}, ctxArgs)
	if err != nil {
		out.Error = c.safeError(err)
	} else if comp != nil && comp.Values != nil {
		out.Values = comp.Values
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
