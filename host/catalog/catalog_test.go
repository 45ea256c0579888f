package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// anon is a request of the anonymous principal with no sink or input.
var anon = catalog.Request{Principal: catalog.Anonymous()}

func mustSet(t testing.TB, opts catalog.Options, ps ...catalog.Provider) *catalog.Set {
	t.Helper()
	s, err := catalog.NewSet(ps, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// many returns a provider listing n dynamic resources under scheme,
// counting the largest page it was asked for.
func many(name, scheme string, n int, maxAsked *int) *catalogtest.Provider {
	var mu sync.Mutex
	return &catalogtest.Provider{
		M: abi.Manifest{Name: name, Version: "1", ABI: abi.Major, Schemes: []string{scheme}, ListsResources: true},
		List: func(_ context.Context, r abi.ListResourcesRequest) (*abi.ListResourcesResult, error) {
			mu.Lock()
			if maxAsked != nil && r.Limit > *maxAsked {
				*maxAsked = r.Limit
			}
			mu.Unlock()
			start := 0
			if r.Cursor != "" {
				start, _ = strconv.Atoi(r.Cursor)
			}
			end := min(start+r.Limit, n)
			res := &abi.ListResourcesResult{Resources: []json.RawMessage{}}
			for i := start; i < end; i++ {
				res.Resources = append(res.Resources, json.RawMessage(fmt.Sprintf(`{"uri":"%s://r/%d","name":"r%d"}`, scheme, i, i)))
			}
			if end < n {
				res.NextCursor = strconv.Itoa(end)
			}
			return res, nil
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "text": "x"}}}, nil
		},
	}
}

func listAll(t *testing.T, s *catalog.Set, kind catalog.ListKind) (uris []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		page, err := s.List(context.Background(), anon, kind, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		for _, it := range page.Items {
			var v struct{ URI, Name, URITemplate string }
			if err := json.Unmarshal(it, &v); err != nil {
				t.Fatal(err)
			}
			uris = append(uris, v.URI+v.URITemplate+"|"+v.Name)
		}
		if page.NextCursor == nil {
			return uris, pages
		}
		cursor = *page.NextCursor
	}
}

func TestListMergesInStableOrderAndPages(t *testing.T) {
	var asked int
	conf := catalogtest.Conformance()
	s := mustSet(t, catalog.Options{PageSize: 7}, many("zeta", "zz", 20, &asked), conf, many("alpha", "aa", 5, nil))
	got, pages := listAll(t, s, catalog.ListResources)
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("aa://r/%d|r%d", i, i))
	}
	want = append(want, "test://static-text|static-text", "test://static-binary|static-binary", "test://watched-resource|watched-resource")
	for i := range 20 {
		want = append(want, fmt.Sprintf("zz://r/%d|r%d", i, i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged list (-want +got):\n%s", diff)
	}
	if pages < 4 {
		t.Errorf("28 items at 7 per page came in %d pages", pages)
	}
	if asked > 7 {
		t.Errorf("a provider was asked for %d items, more than a page", asked)
	}
}

func TestListLargeProviderCostsOnePage(t *testing.T) {
	var asked int
	p := many("big", "big", 100_000, &asked)
	s := mustSet(t, catalog.Options{PageSize: 50}, p)
	page, err := s.List(context.Background(), anon, catalog.ListResources, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 50 || page.NextCursor == nil {
		t.Fatalf("first page: %d items, cursor %v", len(page.Items), page.NextCursor)
	}
	page2, err := s.List(context.Background(), anon, catalog.ListResources, *page.NextCursor)
	if err != nil {
		t.Fatal(err)
	}
	var first struct{ URI string }
	json.Unmarshal(page2.Items[0], &first)
	if first.URI != "big://r/50" {
		t.Errorf("second page starts at %s", first.URI)
	}
	if asked != 50 || p.Calls() != 2 {
		t.Errorf("asked for %d per call in %d calls; want 50 in 2", asked, p.Calls())
	}
}

func TestListStaticKinds(t *testing.T) {
	s := mustSet(t, catalog.Options{PageSize: 3}, catalogtest.Conformance())
	prompts, _ := listAll(t, s, catalog.ListPrompts)
	if len(prompts) != 4 {
		t.Errorf("prompts: %v", prompts)
	}
	tmpls, _ := listAll(t, s, catalog.ListTemplates)
	if diff := cmp.Diff([]string{"test://template/{id}/data|template"}, tmpls); diff != "" {
		t.Error(diff)
	}
	page, _ := s.List(context.Background(), anon, catalog.ListTemplates, "")
	if strings.Contains(string(page.Items[0]), "complete") {
		t.Errorf("template item leaks the manifest's completion list: %s", page.Items[0])
	}
	tools, _ := listAll(t, s, catalog.ListTools)
	if len(tools) != 2 {
		t.Errorf("tools: %v", tools)
	}
}

func TestCursorRejections(t *testing.T) {
	s := mustSet(t, catalog.Options{PageSize: 1}, catalogtest.Conformance())
	page, err := s.List(context.Background(), anon, catalog.ListResources, "")
	if err != nil || page.NextCursor == nil {
		t.Fatal(err)
	}
	good := *page.NextCursor
	other := mustSet(t, catalog.Options{PageSize: 1}, catalogtest.Conformance(), many("extra", "ex", 3, nil))
	// The same position sealed by another deployment's secret.
	stranger := mustSet(t, catalog.Options{PageSize: 1, Keys: ring(t, []byte("another deployment's secret, 32+ b"), nil)}, catalogtest.Conformance())
	fp, err := stranger.List(context.Background(), anon, catalog.ListResources, "")
	if err != nil || fp.NextCursor == nil {
		t.Fatal(err)
	}
	foreign := *fp.NextCursor
	tampered := []byte(good)
	tampered[len(tampered)/2] ^= 1
	tests := []struct {
		name   string
		set    *catalog.Set
		kind   catalog.ListKind
		cursor string
	}{
		{"garbage", s, catalog.ListResources, "not a cursor!"},
		{"tampered", s, catalog.ListResources, string(tampered)},
		{"other list", s, catalog.ListPrompts, good},
		{"replaced set", other, catalog.ListResources, good},
		{"truncated", s, catalog.ListResources, good[:len(good)-3]},
		{"unknown key", s, catalog.ListResources, foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.set.List(context.Background(), anon, tt.kind, tt.cursor)
			ce := catalog.AsError(err)
			if ce == nil || ce.Kind != catalog.KindInvalidParams || !strings.Contains(ce.Message, "restart the listing") {
				t.Fatalf("got %v, want an invalid-cursor error", err)
			}
		})
	}
	// A cursor stays valid for a Set built from the same providers with
	// the same secret (replicas sharing config).
	secret := []byte("a secret the replicas share, 32 bytes")
	a := mustSet(t, catalog.Options{PageSize: 1, Keys: ring(t, secret, nil)}, catalogtest.Conformance())
	b := mustSet(t, catalog.Options{PageSize: 1, Keys: ring(t, secret, nil)}, catalogtest.Conformance())
	pa, _ := a.List(context.Background(), anon, catalog.ListResources, "")
	if _, err := b.List(context.Background(), anon, catalog.ListResources, *pa.NextCursor); err != nil {
		t.Errorf("replica rejected the cursor: %v", err)
	}
}

func TestConflictingClaims(t *testing.T) {
	base := func(name string) abi.Manifest {
		return abi.Manifest{Name: name, Version: "1", ABI: abi.Major, Schemes: []string{name}}
	}
	withScheme := base("b")
	withScheme.Schemes = []string{"TEST"}
	withPrompt := base("c")
	withPrompt.Prompts = []abi.Prompt{{Name: "test_simple_prompt"}}
	withTool := base("d")
	withTool.Tools = []abi.Tool{{Name: "test_simple_text", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	sameName := base("conformance")
	badTemplate := base("e")
	badTemplate.Templates = []abi.Template{{URITemplate: "other://{x}", Name: "x"}}
	badABI := base("f")
	badABI.ABI = 2
	badName := base("Bad Name")
	tests := []struct {
		name string
		m    abi.Manifest
		want string
	}{
		{"scheme", withScheme, `scheme "test" is claimed by both plugin b and plugin conformance`},
		{"prompt", withPrompt, `prompt "test_simple_prompt" is claimed by both plugin c and plugin conformance`},
		{"tool", withTool, `tool "test_simple_text" is claimed by both plugin conformance and plugin d`},
		{"name", sameName, `two plugins are named "conformance"`},
		{"template outside schemes", badTemplate, `does not start with one of the plugin's schemes`},
		{"abi", badABI, "ABI major 2"},
		{"plugin name", badName, "is not [a-z0-9]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance(), &catalogtest.Provider{M: tt.m}}, catalog.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestReadRouting(t *testing.T) {
	s := mustSet(t, catalog.Options{}, catalogtest.Conformance(), many("other", "oth", 1, nil))
	tests := []struct {
		uri      string
		wantKind catalog.Kind
		wantText string
	}{
		{"test://static-text", 0, catalogtest.StaticText},
		{"TEST://static-text", 0, ""},
		{"test://template/42/data", 0, `Data for ID: 42`},
		{"oth://r/1", 0, "x"},
		{"test://missing", catalog.KindResourceNotFound, ""},
		{"nobody://x", catalog.KindResourceNotFound, ""},
		{"file:///etc/../passwd", catalog.KindInvalidParams, ""},
		{"no-scheme", catalog.KindInvalidParams, ""},
		{"", catalog.KindInvalidParams, ""},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := s.ReadResource(context.Background(), anon, tt.uri)
			if tt.wantKind != 0 {
				ce := catalog.AsError(err)
				if ce == nil || ce.Kind != tt.wantKind || ce.URI != tt.uri {
					t.Fatalf("got %v (%#v), want kind %d naming the URI", err, ce, tt.wantKind)
				}
				return
			}
			if tt.uri == "TEST://static-text" {
				// scheme routing is case-insensitive, the provider decides
				if err != nil && catalog.AsError(err).Kind != catalog.KindResourceNotFound {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || !strings.Contains(string(res.Contents[0]), tt.wantText) {
				t.Errorf("contents %s, want %q", res.Contents, tt.wantText)
			}
		})
	}
}

func TestPromptsToolsCompletion(t *testing.T) {
	s := mustSet(t, catalog.Options{}, catalogtest.Conformance())
	ctx := context.Background()
	got, err := s.GetPrompt(ctx, anon, "test_prompt_with_arguments", map[string]string{"arg1": "a1", "arg2": "b2"})
	if err != nil || !strings.Contains(string(got), "arg1='a1'") {
		t.Fatalf("prompt: %s %v", got, err)
	}
	_, err = s.GetPrompt(ctx, anon, "test_prompt_with_arguments", map[string]string{"arg1": "a1"})
	if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInvalidParams || ce.Name != "arg2" {
		t.Errorf("missing argument: %v", err)
	}
	_, err = s.GetPrompt(ctx, anon, "nope", nil)
	if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindUnknownName || ce.Name != "nope" {
		t.Errorf("unknown prompt: %v", err)
	}
	res, err := s.CallTool(ctx, anon, "test_error_handling", nil)
	if err != nil || !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("tool error result: %s %v", res, err)
	}
	_, err = s.CallTool(ctx, anon, "test_simple_text", json.RawMessage(`[1]`))
	if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInvalidParams {
		t.Errorf("array arguments: %v", err)
	}
	c, err := s.Complete(ctx, anon, abi.CompleteRef{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, abi.CompleteArgument{Name: "arg1", Value: "pa"}, nil)
	if err != nil || !cmp.Equal(c.Values, []string{"paris", "park", "party"}) || *c.Total != 3 || c.HasMore {
		t.Errorf("prompt completion: %+v %v", c, err)
	}
	c, err = s.Complete(ctx, anon, abi.CompleteRef{Type: "ref/resource", URI: "test://template/{id}/data"}, abi.CompleteArgument{Name: "id", Value: "4"}, nil)
	if err != nil || !cmp.Equal(c.Values, []string{"42"}) {
		t.Errorf("template completion: %+v %v", c, err)
	}
	c, err = s.Complete(ctx, anon, abi.CompleteRef{Type: "ref/prompt", Name: "test_prompt_with_embedded_resource"}, abi.CompleteArgument{Name: "resourceUri", Value: ""}, nil)
	if err != nil || len(c.Values) != 0 {
		t.Errorf("non-completable argument: %+v %v", c, err)
	}
	for _, ref := range []abi.CompleteRef{{Type: "ref/prompt", Name: "nope"}, {Type: "ref/resource", URI: "test://nope/{x}"}} {
		_, err = s.Complete(ctx, anon, ref, abi.CompleteArgument{Name: "x"}, nil)
		if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindUnknownName {
			t.Errorf("unknown ref %v: %v", ref, err)
		}
	}
}

func TestCompletionCapsAt100(t *testing.T) {
	p := catalogtest.Conformance()
	p.Complete = func(context.Context, abi.CompleteRequest) (*abi.CompleteResult, error) {
		vals := make([]string, 1000)
		for i := range vals {
			vals[i] = strconv.Itoa(i)
		}
		return &abi.CompleteResult{Completion: abi.Completion{Values: vals}}, nil
	}
	s := mustSet(t, catalog.Options{}, p)
	c, err := s.Complete(context.Background(), anon, abi.CompleteRef{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, abi.CompleteArgument{Name: "arg1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Values) != 100 || !c.HasMore || c.Total == nil || *c.Total != 1000 {
		t.Errorf("got %d values, hasMore %v, total %v", len(c.Values), c.HasMore, c.Total)
	}
}

// TestInvalidProviderOutput feeds malformed output through every
// operation: each is refused as the plugin's internal failure, naming it.
func TestInvalidProviderOutput(t *testing.T) {
	outputs := map[string]string{
		"malformed JSON":   `{"contents":[`,
		"invalid UTF-8":    "{\"contents\":[{\"uri\":\"test://a\",\"text\":\"\xff\"}]}",
		"bad base64":       `{"contents":[{"uri":"test://a","blob":"not base64!"}]}`,
		"foreign URI":      `{"contents":[{"uri":"file:///etc/passwd","text":"root"}]}`,
		"text and blob":    `{"contents":[{"uri":"test://a","text":"x","blob":"AAAA"}]}`,
		"neither":          `{"contents":[{"uri":"test://a"}]}`,
		"trailing garbage": `{"contents":[{"uri":"test://a","text":"x"}]} {}`,
		"contents object":  `{"contents":{"uri":"test://a"}}`,
		// Smuggling: two readers of one output must not disagree.
		"repeated uri":          `{"contents":[{"uri":"file:///etc/passwd","uri":"test://a","text":"root"}]}`,
		"case-variant uri":      `{"contents":[{"uri":"test://a","URI":"file:///etc/passwd","text":"root"}]}`,
		"repeated contents":     `{"contents":[{"uri":"test://a","text":"ok"}],"contents":[{"uri":"test://a","text":"other"}]}`,
		"case-variant contents": `{"Contents":[{"uri":"test://a","text":"ok"}]}`,
		"escaped repeat":        `{"contents":[{"uri":"test://a","\u0074ext":"a","text":"b"}]}`,
		"unicode-folded name":   `{"contents":[{"uri":"test://a","text":"a"}],"content\u017F":[]}`,
		"repeated unknown":      `{"contents":[{"uri":"test://a","text":"a","x":1,"x":2}]}`,
	}
	for name, raw := range outputs {
		t.Run(name, func(t *testing.T) {
			p := catalogtest.Conformance()
			p.Raw = []byte(raw)
			s := mustSet(t, catalog.Options{}, p)
			_, err := s.ReadResource(context.Background(), anon, "test://a")
			ce := catalog.AsError(err)
			if ce == nil || ce.Kind != catalog.KindInternal || ce.Plugin != "conformance" || !errors.Is(err, ce.Err) {
				t.Fatalf("got %v, want an internal error naming the plugin", err)
			}
		})
	}
	blocks := map[string]string{
		"unknown type":      `{"messages":[{"role":"user","content":{"type":"video","data":"AAAA"}}]}`,
		"bad role":          `{"messages":[{"role":"system","content":{"type":"text","text":"x"}}]}`,
		"image bad base64":  `{"messages":[{"role":"user","content":{"type":"image","data":"%%%%","mimeType":"image/png"}}]}`,
		"embedded foreign":  `{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"file:///x","text":"x"}}}]}`,
		"no messages":       `{}`,
		"priority too high": `{"messages":[{"role":"user","content":{"type":"text","text":"x","annotations":{"priority":2}}}]}`,
		"repeated role":     `{"messages":[{"role":"user","role":"assistant","content":{"type":"text","text":"x"}}]}`,
		"case-variant type": `{"messages":[{"role":"user","content":{"type":"text","Type":"image","text":"x"}}]}`,
	}
	for name, raw := range blocks {
		t.Run("prompt "+name, func(t *testing.T) {
			p := catalogtest.Conformance()
			p.Raw = []byte(raw)
			s := mustSet(t, catalog.Options{}, p)
			_, err := s.GetPrompt(context.Background(), anon, "test_simple_prompt", nil)
			if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInternal {
				t.Fatalf("got %v, want an internal error", err)
			}
		})
	}
}

func TestOutputIsReencoded(t *testing.T) {
	p := catalogtest.Conformance()
	// unknown fields are dropped: what was checked is what is sent
	p.Raw = []byte(`{"contents":[{"uri":"test://a","text":"<ok>","evil":1}]}`)
	s := mustSet(t, catalog.Options{}, p)
	res, err := s.ReadResource(context.Background(), anon, "test://a")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Contents[0]), `{"uri":"test://a","text":"<ok>"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestProviderErrors(t *testing.T) {
	p := catalogtest.Conformance()
	p.Read = func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
		switch r.URI {
		case "test://invalid":
			return nil, &abi.Error{Code: abi.CodeInvalidParams, Message: "bad id"}
		case "test://internal":
			return nil, &abi.Error{Code: abi.CodeInternal, Message: "secret detail"}
		case "test://trap":
			return nil, errors.New("wasm trap")
		}
		return map[string]any{"contents": []any{}}, nil
	}
	s := mustSet(t, catalog.Options{}, p)
	tests := []struct {
		uri  string
		kind catalog.Kind
		msg  string
	}{
		{"test://invalid", catalog.KindInvalidParams, "bad id"},
		{"test://internal", catalog.KindInternal, "the plugin failed"},
		{"test://trap", catalog.KindInternal, "the plugin failed"},
		{"test://empty", catalog.KindResourceNotFound, "Resource not found"},
	}
	for _, tt := range tests {
		_, err := s.ReadResource(context.Background(), anon, tt.uri)
		ce := catalog.AsError(err)
		if ce == nil || ce.Kind != tt.kind || ce.Message != tt.msg {
			t.Errorf("%s: got %#v", tt.uri, ce)
		}
	}
}

func TestGeneration(t *testing.T) {
	empty := mustSet(t, catalog.Options{})
	full := mustSet(t, catalog.Options{}, catalogtest.Conformance())
	if empty.Generation() == full.Generation() {
		t.Error("different sets share a generation")
	}
	again := mustSet(t, catalog.Options{}, catalogtest.Conformance())
	if again.Generation() != full.Generation() {
		t.Error("the same providers give different generations")
	}
}

func TestCatalogSwap(t *testing.T) {
	a := mustSet(t, catalog.Options{}, catalogtest.Conformance())
	b := mustSet(t, catalog.Options{})
	c := catalog.New(a)
	if c.Current() != a {
		t.Fatal("current")
	}
	if old := c.Swap(b); old != a || c.Current() != b {
		t.Fatal("swap")
	}
}

// TestSwapHammer reads through the Catalog from many goroutines while
// Sets are swapped underneath: every read succeeds on the Set it loaded.
func TestSwapHammer(t *testing.T) {
	c := catalog.New(mustSet(t, catalog.Options{}, catalogtest.Conformance()))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := c.Current()
				res, err := s.ReadResource(context.Background(), anon, "test://static-text")
				if err != nil || !strings.Contains(string(res.Contents[0]), catalogtest.StaticText) {
					errs <- fmt.Errorf("read during swap: %v", err)
					return
				}
			}
		}()
	}
	for i := range 200 {
		ps := []catalog.Provider{catalogtest.Conformance()}
		if i%2 == 0 {
			ps = append(ps, many("extra", "ex", 3, nil))
		}
		c.Swap(mustSet(t, catalog.Options{}, ps...))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDeclaredMetadataIsChecked: the annotations and icons a manifest
// declares are held to MCP's shapes like a provider's listed items, and a
// plugin declaring bad ones is refused with the item named.
func TestDeclaredMetadataIsChecked(t *testing.T) {
	resource := func(annotations, icons string) abi.Manifest {
		return abi.Manifest{Name: "m", Version: "1", ABI: abi.Major, Schemes: []string{"m"},
			Resources: []abi.Resource{{URI: "m://doc", Name: "doc",
				Annotations: rawOrNil(annotations), Icons: rawOrNil(icons)}}}
	}
	prompt := abi.Manifest{Name: "m", Version: "1", ABI: abi.Major,
		Prompts: []abi.Prompt{{Name: "p", Icons: json.RawMessage(`[{"src":""}]`)}}}
	tool := abi.Manifest{Name: "m", Version: "1", ABI: abi.Major,
		Tools: []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`[1]`)}}}
	template := abi.Manifest{Name: "m", Version: "1", ABI: abi.Major, Schemes: []string{"m"},
		Templates: []abi.Template{{URITemplate: "m://{x}", Name: "x", Annotations: json.RawMessage(`{"priority":-1}`)}}}
	tests := []struct {
		name string
		m    abi.Manifest
		want string // "" accepts
	}{
		{"valid", resource(`{"audience":["user"],"priority":0.5,"lastModified":"2026-01-01T00:00:00Z"}`, `[{"src":"https://x/i.png","theme":"dark"}]`), ""},
		{"null annotations", resource(`null`, ``), ""},
		{"audience", resource(`{"audience":["robot"]}`, ``), `static resource "m://doc": invalid output: annotations.audience has "robot"`},
		{"priority", resource(`{"priority":2}`, ``), "priority 2 outside 0..1"},
		{"annotations not an object", resource(`"x"`, ``), `static resource "m://doc": annotations:`},
		{"bad UTF-8", resource("{\"lastModified\":\"\xff\"}", ``), "UTF-8"},
		{"icon without src", resource(``, `[{"mimeType":"image/png"}]`), "icon without src"},
		{"icon theme", resource(``, `[{"src":"a","theme":"blue"}]`), `icon theme "blue"`},
		{"icons not an array", resource(``, `{"src":"a"}`), `static resource "m://doc": icons:`},
		{"prompt icon", prompt, `prompt "p": invalid output: icon without src`},
		{"tool annotations", tool, `tool "t": outputSchema and annotations must be JSON objects`},
		{"template priority", template, `template "m://{x}": invalid output: annotations.priority -1 outside 0..1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalog.NewSet([]catalog.Provider{&catalogtest.Provider{M: tt.m}}, catalog.Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// TestClaimsMatchConflicts: whenever NewSet refuses two providers with a
// ConflictError, Claims of both share exactly that claim, so settling
// conflicts with Claims beforehand leaves NewSet nothing to refuse.
func TestClaimsMatchConflicts(t *testing.T) {
	conf := catalogtest.Conformance()
	ct := conf.Manifest()
	other := func(edit func(m *abi.Manifest)) abi.Manifest {
		m := abi.Manifest{Name: "other", Version: "1", ABI: abi.Major, Schemes: []string{"other"}}
		edit(&m)
		return m
	}
	for _, m := range []abi.Manifest{
		other(func(m *abi.Manifest) { m.Name = ct.Name }),
		other(func(m *abi.Manifest) { m.Schemes = []string{"TEST"} }),
		other(func(m *abi.Manifest) { m.Prompts = []abi.Prompt{{Name: ct.Prompts[0].Name}} }),
		other(func(m *abi.Manifest) {
			m.Tools = []abi.Tool{{Name: ct.Tools[0].Name, InputSchema: json.RawMessage(`{"type":"object"}`)}}
		}),
	} {
		_, err := catalog.NewSet([]catalog.Provider{conf, &catalogtest.Provider{M: m}}, catalog.Options{})
		var ce *catalog.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("%+v: NewSet = %v, want a ConflictError", m, err)
		}
		want := catalog.Claim{Kind: ce.Claim, Value: ce.Value}
		if !slices.Contains(catalog.Claims(ct), want) || !slices.Contains(catalog.Claims(&m), want) {
			t.Errorf("the conflict %+v is not in both providers' Claims", want)
		}
	}
}
