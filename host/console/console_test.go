package console_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/console"
	"github.com/corral-mcp/corral/host/registry"
)

// fixed is a Registry over one Set: the console's own logic against a
// real catalog, without compiling plugins.
type fixed struct {
	cat *catalog.Catalog
	cfg *config.Config
}

func (f fixed) Catalog() *catalog.Catalog { return f.cat }
func (f fixed) Config() *config.Config    { return f.cfg }
func (f fixed) Status() registry.Status {
	return registry.Status{Ready: true, Generation: f.cat.Current().Generation(), Files: []registry.FileStatus{
		{Path: "/plugins/<b>bad</b>.wasm", State: registry.StateFailed, Error: `wasm: <script>alert("file")</script>`},
	}}
}

const hostile = `<script>alert(1)</script>`

// onlyOps hides evil://secret from everyone but the principal ops.
type onlyOps struct{}

func (onlyOps) View(p abi.Principal) catalog.View { return opsView{ops: p.ID == "ops"} }

type opsView struct{ ops bool }

func (opsView) Plugin(string) bool { return true }
func (v opsView) Resource(_, _, _, uri string) bool {
	return v.ops || uri != "evil://secret"
}
func (opsView) Template(string, string, string) bool { return true }
func (opsView) Prompt(string, string) bool           { return true }
func (opsView) Tool(string, string) bool             { return true }

func newConsole(t *testing.T, principal string) http.Handler {
	t.Helper()
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really"))
	svg := base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(3)</script></svg>`))
	p := &catalogtest.Provider{
		M: abi.Manifest{Name: "evil", Version: "1", ABI: abi.Major, Title: hostile, Description: hostile,
			Schemes: []string{"evil"},
			Resources: []abi.Resource{
				{URI: "evil://a", Name: `<img src=x onerror=alert(1)>`, Description: hostile},
				{URI: "evil://pic", Name: "pic"}, {URI: "evil://svg", Name: "svg"}, {URI: "evil://secret", Name: "secret"},
			},
			Templates: []abi.Template{{URITemplate: "evil://t/{x}", Name: "t", Title: hostile, Complete: []string{"x"}}},
			Prompts:   []abi.Prompt{{Name: "p", Title: hostile, Arguments: []abi.PromptArgument{{Name: "who", Title: hostile}}}},
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			switch r.URI {
			case "evil://pic":
				return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "mimeType": "image/png", "blob": png}}}, nil
			case "evil://svg":
				return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "mimeType": "image/svg+xml", "blob": svg}}}, nil
			case "evil://a", "evil://secret", "evil://t/a%20b":
			default:
				return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such resource"}
			}
			return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "mimeType": "text/html", "text": hostile}}}, nil
		},
		Prompt: func(_ context.Context, r abi.GetPromptRequest) (any, error) {
			return map[string]any{"description": hostile, "messages": []any{
				map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": hostile + r.Arguments["who"]}},
			}}, nil
		},
		Complete: func(_ context.Context, r abi.CompleteRequest) (*abi.CompleteResult, error) {
			return &abi.CompleteResult{Completion: abi.Completion{Values: []string{r.Argument.Value + hostile}}}, nil
		},
	}
	set, err := catalog.NewSet([]catalog.Provider{p}, catalog.Options{Policy: onlyOps{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{})
	if err != nil {
		t.Fatal(err)
	}
	return console.New(console.Options{Registry: fixed{cat: catalog.New(set), cfg: cfg},
		Principal: func(*http.Request) abi.Principal { return abi.Principal{ID: principal} }})
}

func serve(t *testing.T, h http.Handler, method, target string, body io.Reader) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func bodyOf(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEscapesWhatPluginsSupply: a plugin's names, titles, descriptions,
// content, completion values and a file's load error reach every page
// escaped; an SVG is never shown as an image; downloads are attachments.
func TestEscapesWhatPluginsSupply(t *testing.T) {
	h := newConsole(t, "ops")
	pages := []struct {
		method, target, form string
		want                 []string
	}{
		{"GET", "/console/", "", []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bad&lt;/b&gt;.wasm", `&lt;script&gt;alert(&#34;file&#34;)`}},
		{"GET", "/console/fragment/plugins", "", []string{`data-plugin="evil"`}},
		{"GET", "/console/plugin/evil", "", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}},
		{"GET", "/console/resources", "", []string{"&lt;img src=x onerror=alert(1)&gt;", `data-template="evil://t/{x}"`}},
		{"GET", "/console/read?uri=" + url.QueryEscape("evil://a"), "", []string{`<pre class="text">&lt;script&gt;alert(1)&lt;/script&gt;</pre>`}},
		{"GET", "/console/read?template=" + url.QueryEscape("evil://t/{x}") + "&v.x=" + url.QueryEscape("a b"), "", []string{`<code id="uri">evil://t/a%20b</code>`}},
		{"GET", "/console/read?uri=" + url.QueryEscape("evil://pic"), "", []string{`<img class="image" src="data:image/png;base64,`}},
		{"GET", "/console/read?uri=" + url.QueryEscape("evil://svg"), "", []string{`class="download" href="/console/download?uri=evil%3a%2f%2fsvg&i=0"`}},
		{"POST", "/console/prompt", "name=p&a.who=" + url.QueryEscape(hostile), []string{"&lt;script&gt;alert(1)&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"}},
		{"GET", "/console/api/complete?type=ref/resource&ref=" + url.QueryEscape("evil://t/{x}") + "&arg=x&value=v", "", []string{`"values":["v\u003cscript\u003ealert(1)\u003c/script\u003e"]`}},
	}
	for _, p := range pages {
		t.Run(p.method+" "+p.target, func(t *testing.T) {
			var body io.Reader
			if p.form != "" {
				body = strings.NewReader(p.form)
			}
			resp := serve(t, h, p.method, p.target, body)
			b := bodyOf(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			for _, bad := range []string{"<script>alert", "<img src=x", "<svg", "image/svg+xml;base64", "<b>bad"} {
				if strings.Contains(b, bad) {
					t.Errorf("page holds %q unescaped:\n%s", bad, b)
				}
			}
			for _, w := range p.want {
				if !strings.Contains(b, w) {
					t.Errorf("page lacks %q:\n%s", w, b)
				}
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
	resp := serve(t, h, "GET", "/console/download?uri="+url.QueryEscape("evil://svg")+"&i=0", nil)
	if resp.Header.Get("Content-Disposition") != `attachment; filename="svg"` || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		resp.Header.Get("Content-Security-Policy") != "sandbox" || !strings.Contains(bodyOf(t, resp), "<svg") {
		t.Errorf("download: %v", resp.Header)
	}
}

// TestBrowsesThroughThePolicy: the console reads as its principal, through
// the policy like any client: what that principal may not see answers
// exactly as a missing resource does.
func TestBrowsesThroughThePolicy(t *testing.T) {
	read := func(principal, uri string) string {
		return bodyOf(t, serve(t, newConsole(t, principal), "GET", "/console/read?uri="+url.QueryEscape(uri), nil))
	}
	if b := read("ops", "evil://secret"); !strings.Contains(b, `<pre class="text">`) {
		t.Errorf("ops cannot read evil://secret:\n%s", b)
	}
	hidden := read("someone", "evil://secret")
	missing := read("someone", "evil://nothing")
	errorOf := func(b string) string {
		i := strings.Index(b, `id="error">`)
		if i < 0 {
			return ""
		}
		return b[i : i+strings.Index(b[i:], "</p>")]
	}
	if want := `id="error">Resource not found: evil://nothing`; errorOf(missing) != want {
		t.Fatalf("missing: %q, want %q", errorOf(missing), want)
	}
	if errorOf(hidden) != strings.Replace(errorOf(missing), "nothing", "secret", 1) {
		t.Errorf("hidden answers %q, missing %q", errorOf(hidden), errorOf(missing))
	}
	list := bodyOf(t, serve(t, newConsole(t, "someone"), "GET", "/console/resources", nil))
	if strings.Contains(list, "evil://secret") {
		t.Error("the resource list shows a resource the principal may not see")
	}
}
