package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/notify"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func newServer(t testing.TB, providers ...catalog.Provider) *Server {
	t.Helper()
	if len(providers) == 0 {
		providers = []catalog.Provider{catalogtest.Conformance()}
	}
	set, err := catalog.NewSet(providers, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return NewServer(catalog.New(set), Options{Version: "test"})
}

func TestBoundCompletion(t *testing.T) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	n := func(i int) *int { return &i }
	tests := []struct {
		name      string
		in        *abi.Completion
		wantLen   int
		wantTotal int
		wantMore  bool
	}{
		{"nil", nil, 0, 0, false},
		{"small, no total", &abi.Completion{Values: []string{"a"}}, 1, -1, false},
		{"over the cap", &abi.Completion{Values: many}, 100, 150, true},
		{"over the cap, low total", &abi.Completion{Values: many, Total: n(3)}, 100, 150, true},
		{"total beyond values", &abi.Completion{Values: []string{"a"}, Total: n(9)}, 1, 9, true},
		{"total below values", &abi.Completion{Values: []string{"a", "b"}, Total: n(1)}, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, total, more := boundCompletion(tt.in)
			if len(v) != tt.wantLen || total != tt.wantTotal || more != tt.wantMore {
				t.Errorf("got len %d total %d hasMore %v; want %d %d %v", len(v), total, more, tt.wantLen, tt.wantTotal, tt.wantMore)
			}
			if v == nil {
				t.Error("values is nil; it must encode as []")
			}
		})
	}
}

func TestSpliceResult(t *testing.T) {
	info := []byte(`{"name":"corral","version":"1"}`)
	tests := []struct {
		name   string
		raw    string
		modern bool
		want   string
	}{
		{"legacy passes through", `{"content":[]}`, false, `{"content":[]}`},
		{"modern splice", `{"content":[]}`, true, `{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"corral","version":"1"}}}`},
		{"empty object", `{}`, true, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"corral","version":"1"}}}`},
		{"own _meta merged", `{"content":[],"_meta":{"x.y/z":1},"resultType":"bogus"}`, true, `{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"corral","version":"1"},"x.y/z":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spliceResult(json.RawMessage(tt.raw), tt.modern, info)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := spliceResult(json.RawMessage(`[1]`), true, info); err == nil {
		t.Error("a non-object result was accepted")
	}
}

// TestServeErrors checks the classification transports rely on.
func TestServeErrors(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name     string
		msg      string
		session  bool
		wantCode int
		envelope bool
	}{
		{"no meta outside a session", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, CodeInvalidParams, true},
		{"missing capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false, CodeInvalidParams, true},
		{"version as number", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`, false, CodeInvalidParams, true},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x","io.modelcontextprotocol/clientCapabilities":{}}}}`, false, CodeUnsupportedVersion, false},
		{"initialize without a session", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, false, CodeInvalidParams, false},
		{"not found modern", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://none",` + modernMeta + `}}`, false, CodeInvalidParams, false},
		{"unadvertised", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{}
			if tt.session {
				req.Session = NewSession("s")
			}
			r := s.ServeBytes(context.Background(), req, []byte(tt.msg))
			if tt.wantCode == 0 {
				if r.Err != nil {
					t.Fatalf("unexpected error %v", r.Err)
				}
				return
			}
			if r.Err == nil {
				t.Fatalf("no error; reply %s", r.Msg)
			}
			if r.Err.Code != tt.wantCode || r.Err.Envelope != tt.envelope {
				t.Errorf("code %d envelope %v; want %d %v (%s)", r.Err.Code, r.Err.Envelope, tt.wantCode, tt.envelope, r.Msg)
			}
		})
	}
}

func TestCapabilitiesWhateverTheSet(t *testing.T) {
	// Capabilities do not follow the plugin set: a server with no
	// plugins, or with only resources, advertises every feature, and
	// serves each (an empty list, or the error of a missing name), so a
	// client that connected early caches nothing it must unlearn.
	only := &catalogtest.Provider{M: abi.Manifest{Name: "res", Version: "1", ABI: abi.Major, Schemes: []string{"res"},
		Resources: []abi.Resource{{URI: "res://a", Name: "a"}}}}
	const (
		modern = `"capabilities":{"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
		legacy = `"capabilities":{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
		static = `"capabilities":{"completions":{},"prompts":{},"resources":{},"tools":{}}`
	)
	for name, providers := range map[string][]catalog.Provider{"empty": nil, "resources only": {only}} {
		t.Run(name, func(t *testing.T) {
			set, err := catalog.NewSet(providers, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			live := NewServer(catalog.New(set), Options{Version: "test", Hub: notify.New(notify.Options{})})
			bare := NewServer(catalog.New(set), Options{Version: "test"})
			discover := []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
			if r := live.ServeBytes(context.Background(), Request{}, discover); !strings.Contains(string(r.Msg), modern) {
				t.Errorf("discover: %s, want %s", r.Msg, modern)
			}
			if r := bare.ServeBytes(context.Background(), Request{}, discover); !strings.Contains(string(r.Msg), static) {
				t.Errorf("discover without a hub: %s, want %s", r.Msg, static)
			}
			init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if r := live.ServeBytes(context.Background(), Request{Session: NewSession("s")}, init); !strings.Contains(string(r.Msg), legacy) {
				t.Errorf("initialize: %s, want %s", r.Msg, legacy)
			}
			tests := []struct {
				method, want string
				code         int
			}{
				{"prompts/list", `"prompts":[]`, 0},
				{"tools/list", `"tools":[]`, 0},
				{"resources/templates/list", `"resourceTemplates":[]`, 0},
				{"prompts/get", `"data":{"name":"x"}`, CodeInvalidParams},
				{"tools/call", `"data":{"name":"x"}`, CodeInvalidParams},
				{"completion/complete", `"data":{"name":"x"}`, CodeInvalidParams},
			}
			for _, tt := range tests {
				r := live.ServeBytes(context.Background(), Request{}, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+tt.method+
					`","params":{"name":"x","ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""},`+modernMeta+`}}`))
				code := 0
				if r.Err != nil {
					code = r.Err.Code
				}
				if code != tt.code || !strings.Contains(string(r.Msg), tt.want) {
					t.Errorf("%s: %s, want code %d and %s", tt.method, r.Msg, tt.code, tt.want)
				}
			}
		})
	}
	// Without a hub there is nothing to listen to.
	r := newServer(t, only).ServeBytes(context.Background(), Request{}, []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{`+modernMeta+`}}`))
	if r.Err == nil || r.Err.Code != CodeMethodNotFound {
		t.Errorf("subscriptions/listen without a hub: %s, want -32601", r.Msg)
	}
}

func TestCancelledRequestSendsNothing(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := s.ServeBytes(ctx, Request{}, []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",`+modernMeta+`}}`))
	if r.Msg != nil {
		t.Errorf("cancelled request answered: %s", r.Msg)
	}
}

func BenchmarkServeRead(b *testing.B) {
	s := newServer(b)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",` + modernMeta + `}}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := s.ServeBytes(ctx, Request{}, msg); r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",` + modernMeta + `}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}
