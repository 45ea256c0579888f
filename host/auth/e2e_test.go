package auth_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/transport"
	"github.com/google/go-cmp/cmp"
)

// fixtures: a public plugin and a staff-only plugin.
func fixtures() []catalog.Provider {
	pub := &catalogtest.Provider{
		M: abi.Manifest{
			Name: "pub", ABI: abi.Major, Schemes: []string{"pub"},
			Resources: []abi.Resource{{URI: "pub://a", Name: "a"}, {URI: "pub://staff-notes", Name: "staff notes"}},
			Templates: []abi.Template{{URITemplate: "pub://docs/{name}", Name: "docs", Complete: []string{"name"}}},
			Prompts:   []abi.Prompt{{Name: "greet"}, {Name: "staff_prompt"}},
			Tools:     []abi.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			switch {
			case r.URI == "pub://a" || r.URI == "pub://staff-notes" || strings.HasPrefix(r.URI, "pub://docs/"):
				return map[string]any{"contents": []any{map[string]string{"uri": r.URI, "text": "for " + r.Principal.ID}}}, nil
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such thing"}
		},
		Prompt: func(_ context.Context, r abi.GetPromptRequest) (any, error) {
			return map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": r.Name}}}}, nil
		},
		Tool: func(_ context.Context, r abi.CallToolRequest) (any, error) {
			return map[string]any{"content": []any{map[string]string{"type": "text", "text": "echo"}}}, nil
		},
		Complete: func(_ context.Context, r abi.CompleteRequest) (*abi.CompleteResult, error) {
			n := 3
			return &abi.CompleteResult{Completion: abi.Completion{Values: []string{"public-1", "public-2", "secret-1"}, Total: &n}}, nil
		},
	}
	sec := &catalogtest.Provider{
		M: abi.Manifest{
			Name: "sec", ABI: abi.Major, Schemes: []string{"sec"},
			Resources: []abi.Resource{{URI: "sec://x", Name: "x"}},
			Tools:     []abi.Tool{{Name: "admin_tool", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			if r.URI == "sec://x" {
				return map[string]any{"contents": []any{map[string]string{"uri": r.URI, "text": "secret"}}}, nil
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such thing"}
		},
		Tool: func(_ context.Context, r abi.CallToolRequest) (any, error) {
			return map[string]any{"content": []any{map[string]string{"type": "text", "text": "done"}}}, nil
		},
	}
	return []catalog.Provider{pub, sec}
}

const (
	guestToken = "guest-token-0123456789"
	staffToken = "staff-token-0123456789"
)

// newServer serves the fixtures over HTTP behind the authenticator, with
// a policy: staff see everything; guest sees the pub plugin's public part.
func newServer(t *testing.T, completionsPerSecond float64) *httptest.Server {
	t.Helper()
	return newServerHub(t, completionsPerSecond, nil)
}

func newServerHub(t *testing.T, completionsPerSecond float64, hub *notify.Hub) *httptest.Server {
	t.Helper()
	pol, err := auth.NewPolicy([]auth.Rule{
		{Groups: []string{"staff"}},
		{
			Principals: []string{"guest"},
			Plugins:    []string{"pub"},
			Resources:  []string{"pub://a", "pub://docs/public-*"},
			Prompts:    []string{"greet"},
			Tools:      []string{"!"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := catalog.NewSet(fixtures(), catalog.Options{Policy: pol, Authenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Options{Tokens: []auth.StaticToken{
		{SHA256: auth.HashToken(guestToken), Principal: "guest"},
		{SHA256: auth.HashToken(staffToken), Principal: "alice", Groups: []string{"staff"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts := mcp.Options{Hub: hub}
	if completionsPerSecond > 0 {
		opts.AllowCompletion = auth.NewLimiter(completionsPerSecond, 2).Allow
	}
	srv := mcp.NewServer(catalog.New(set), opts)
	h := transport.NewHTTPHandler(srv, transport.HTTPOptions{PrincipalFunc: auth.PrincipalOf, AllowedHosts: []string{"*"}})
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.Middleware(h))
	mux.Handle(auth.MetadataPath, a.MetadataHandler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// call posts one modern request and returns the HTTP status and the
// decoded response.
func call(t *testing.T, ts *httptest.Server, token, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.VersionModern,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(transport.HeaderProtocolVersion, mcp.VersionModern)
	req.Header.Set(transport.HeaderMethod, method)
	if n, ok := params["name"].(string); ok {
		req.Header.Set(transport.HeaderName, n)
	}
	if u, ok := params["uri"].(string); ok && method == "resources/read" {
		req.Header.Set(transport.HeaderName, u)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: undecodable response %q", method, b)
	}
	return res.StatusCode, out
}

func names(t *testing.T, resp map[string]any, field, key string) []string {
	t.Helper()
	res, _ := resp["result"].(map[string]any)
	items, ok := res[field].([]any)
	if !ok {
		t.Fatalf("no %s in %v", field, resp)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.(map[string]any)[key].(string))
	}
	return out
}

func TestTwoPrincipalsSeeDifferentThings(t *testing.T) {
	ts := newServer(t, 0)
	tests := []struct {
		token     string
		resources []string
		templates []string
		prompts   []string
		tools     []string
		values    []string
		total     float64
	}{
		{guestToken, []string{"pub://a"}, []string{"pub://docs/{name}"}, []string{"greet"}, []string{}, []string{"public-1", "public-2"}, 2},
		{staffToken, []string{"pub://a", "pub://staff-notes", "sec://x"}, []string{"pub://docs/{name}"}, []string{"greet", "staff_prompt"}, []string{"echo", "admin_tool"}, []string{"public-1", "public-2", "secret-1"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.token[:5], func(t *testing.T) {
			lists := []struct {
				method, field, key string
				want               []string
			}{
				{"resources/list", "resources", "uri", tt.resources},
				{"resources/templates/list", "resourceTemplates", "uriTemplate", tt.templates},
				{"prompts/list", "prompts", "name", tt.prompts},
				{"tools/list", "tools", "name", tt.tools},
			}
			for _, l := range lists {
				_, resp := call(t, ts, tt.token, l.method, nil)
				if diff := cmp.Diff(l.want, names(t, resp, l.field, l.key)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", l.method, diff)
				}
				if got := resp["result"].(map[string]any)["cacheScope"]; got != "private" {
					t.Errorf("%s cacheScope = %v, want private", l.method, got)
				}
			}
			_, resp := call(t, ts, tt.token, "completion/complete", map[string]any{
				"ref":      map[string]any{"type": "ref/resource", "uri": "pub://docs/{name}"},
				"argument": map[string]any{"name": "name", "value": ""},
			})
			c := resp["result"].(map[string]any)["completion"].(map[string]any)
			var vals []string
			for _, v := range c["values"].([]any) {
				vals = append(vals, v.(string))
			}
			if diff := cmp.Diff(tt.values, vals); diff != "" {
				t.Errorf("completion values (-want +got):\n%s", diff)
			}
			if c["total"] != tt.total {
				t.Errorf("completion total = %v, want %v", c["total"], tt.total)
			}
		})
	}
}

func TestReadsArePrivateAndPerPrincipal(t *testing.T) {
	ts := newServer(t, 0)
	for _, tok := range []string{guestToken, staffToken} {
		_, resp := call(t, ts, tok, "resources/read", map[string]any{"uri": "pub://a"})
		res := resp["result"].(map[string]any)
		if res["cacheScope"] != "private" {
			t.Errorf("read cacheScope = %v, want private", res["cacheScope"])
		}
		text := res["contents"].([]any)[0].(map[string]any)["text"]
		want := map[string]string{guestToken: "for guest", staffToken: "for alice"}[tok]
		if text != want {
			t.Errorf("read text = %v, want %q (the plugin sees the principal, not the token)", text, want)
		}
	}
}

// TestHiddenIsMissing: for the guest, everything hidden answers byte for
// byte like something that does not exist.
func TestHiddenIsMissing(t *testing.T) {
	ts := newServer(t, 0)
	pairs := []struct {
		name            string
		method          string
		hidden, missing map[string]any
		field           string // the member naming the thing, normalised before comparing
	}{
		{"read other plugin", "resources/read", map[string]any{"uri": "sec://x"}, map[string]any{"uri": "nosuch://x"}, "uri"},
		{"read hidden resource", "resources/read", map[string]any{"uri": "pub://staff-notes"}, map[string]any{"uri": "nosuch://y"}, "uri"},
		{"read hidden template value", "resources/read", map[string]any{"uri": "pub://docs/secret-1"}, map[string]any{"uri": "nosuch://z"}, "uri"},
		{"prompt", "prompts/get", map[string]any{"name": "staff_prompt"}, map[string]any{"name": "no_prompt"}, "name"},
		{"tool", "tools/call", map[string]any{"name": "admin_tool"}, map[string]any{"name": "no_tool"}, "name"},
		{"completion of hidden prompt", "completion/complete",
			map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "staff_prompt"}, "argument": map[string]any{"name": "x", "value": ""}},
			map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "no_prompt"}, "argument": map[string]any{"name": "x", "value": ""}}, "name"},
	}
	for _, tt := range pairs {
		t.Run(tt.name, func(t *testing.T) {
			hs, hidden := call(t, ts, guestToken, tt.method, tt.hidden)
			ms, missing := call(t, ts, guestToken, tt.method, tt.missing)
			if hidden["error"] == nil {
				t.Fatalf("hidden %v was served: %v", tt.hidden, hidden)
			}
			for _, r := range []map[string]any{hidden, missing} {
				if d, ok := r["error"].(map[string]any)["data"].(map[string]any); ok {
					d[tt.field] = "X"
				}
			}
			if hs != ms {
				t.Errorf("HTTP status hidden %d, missing %d", hs, ms)
			}
			if diff := cmp.Diff(missing, hidden); diff != "" {
				t.Errorf("hidden differs from missing (-missing +hidden):\n%s", diff)
			}
		})
	}
	// The staff principal does see them.
	if _, r := call(t, ts, staffToken, "resources/read", map[string]any{"uri": "sec://x"}); r["error"] != nil {
		t.Errorf("staff cannot read sec://x: %v", r)
	}
}

func TestUnauthorized(t *testing.T) {
	ts := newServer(t, 0)
	for _, tok := range []string{"", "wrong-token", "a.b.c"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{}`))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", tok, res.StatusCode)
		}
		wa := res.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(wa, "Bearer ") || !strings.Contains(wa, `resource_metadata="`+ts.URL+auth.MetadataPath+`"`) {
			t.Errorf("WWW-Authenticate = %q", wa)
		}
		if invalid := strings.Contains(wa, `error="invalid_token"`); invalid != (tok != "") {
			t.Errorf("token %q: WWW-Authenticate %q: invalid_token present = %v", tok, wa, invalid)
		}
	}
	res, err := http.Get(ts.URL + auth.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["resource"] != ts.URL+"/mcp" || doc["bearer_methods_supported"].([]any)[0] != "header" {
		t.Errorf("metadata document %v", doc)
	}
}

func TestCompletionRateLimited(t *testing.T) {
	ts := newServer(t, 0.001) // burst 2, then nothing for a long time
	params := func() map[string]any {
		return map[string]any{
			"ref":      map[string]any{"type": "ref/resource", "uri": "pub://docs/{name}"},
			"argument": map[string]any{"name": "name", "value": ""},
		}
	}
	for i := range 2 {
		if st, r := call(t, ts, guestToken, "completion/complete", params()); st != 200 || r["error"] != nil {
			t.Fatalf("completion %d: %d %v", i, st, r)
		}
	}
	st, r := call(t, ts, guestToken, "completion/complete", params())
	if st != http.StatusTooManyRequests || r["error"].(map[string]any)["code"] != float64(mcp.CodeRateLimited) {
		t.Errorf("third completion: status %d, %v; want 429 and code %d", st, r, mcp.CodeRateLimited)
	}
	// Another principal has its own bucket.
	if st, r := call(t, ts, staffToken, "completion/complete", params()); st != 200 || r["error"] != nil {
		t.Errorf("staff completion: %d %v", st, r)
	}
}

// TestLegacySessionBoundToPrincipal: a 2025 session opened by one
// principal is not found for another, even with its id.
func TestLegacySessionBoundToPrincipal(t *testing.T) {
	ts := newServer(t, 0)
	post := func(token, session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set(transport.HeaderSessionID, session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := post(guestToken, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := res.Header.Get(transport.HeaderSessionID)
	if res.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", res.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if res := post(guestToken, sid, list); res.StatusCode != 200 {
		t.Errorf("owner's request: %d", res.StatusCode)
	}
	if res := post(staffToken, sid, list); res.StatusCode != http.StatusNotFound {
		t.Errorf("another principal using the session: %d, want 404", res.StatusCode)
	}
}

// TestNoUpdatesAboutHiddenResources: a listen stream subscribing to a
// visible and a hidden URI acknowledges both (no oracle) but only ever
// hears about the visible one.
func TestNoUpdatesAboutHiddenResources(t *testing.T) {
	hub := notify.New(notify.Options{})
	defer hub.Close()
	ts := newServerHub(t, 0, hub)
	params := map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    mcp.VersionModern,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
		"notifications": map[string]any{"resourceSubscriptions": []string{"pub://staff-notes", "pub://a"}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(transport.HeaderProtocolVersion, mcp.VersionModern)
	req.Header.Set(transport.HeaderMethod, "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+guestToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- line
			}
		}
		close(events)
	}()
	ack := <-events
	if !strings.Contains(ack, "pub://staff-notes") || !strings.Contains(ack, "pub://a") {
		t.Fatalf("acknowledgement %s does not honour both URIs", ack)
	}
	hub.Publish(notify.ResourceUpdated, "pub://staff-notes")
	hub.Publish(notify.ResourceUpdated, "pub://a")
	got := <-events
	if !strings.Contains(got, `"uri":"pub://a"`) {
		t.Fatalf("first update %s, want pub://a (and never pub://staff-notes)", got)
	}
	cancel()
	for ev := range events {
		if strings.Contains(ev, "staff-notes") {
			t.Fatalf("the guest heard about a hidden resource: %s", ev)
		}
	}
}

// TestFailsClosedWithoutMiddleware: a transport resolving principals with
// PrincipalOf refuses requests that did not pass the middleware.
func TestFailsClosedWithoutMiddleware(t *testing.T) {
	set, err := catalog.NewSet(fixtures(), catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := transport.NewHTTPHandler(mcp.NewServer(catalog.New(set), mcp.Options{}),
		transport.HTTPOptions{PrincipalFunc: auth.PrincipalOf, AllowedHosts: []string{"*"}})
	ts := httptest.NewServer(h)
	defer ts.Close()
	if st, _ := call(t, ts, staffToken, "tools/list", nil); st != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", st)
	}
}
