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

func TestUnadvertisedMethods(t *testing.T) {
	// A provider serving only resources: prompts, tools and completion
	// are not advertised and answer -32601.
	only := &catalogtest.Provider{M: abi.Manifest{Name: "res", Version: "1", ABI: abi.Major, Schemes: []string{"res"},
		Resources: []abi.Resource{{URI: "res://a", Name: "a"}}}}
	s := newServer(t, only)
	for _, method := range []string{"prompts/list", "prompts/get", "tools/list", "tools/call", "completion/complete", "subscriptions/listen"} {
		t.Run(method, func(t *testing.T) {
			r := s.ServeBytes(context.Background(), Request{}, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"name":"x",`+modernMeta+`}}`))
			if r.Err == nil || r.Err.Code != CodeMethodNotFound {
				t.Errorf("reply %s, want -32601", r.Msg)
			}
		})
	}
	r := s.ServeBytes(context.Background(), Request{}, []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`))
	if !strings.Contains(string(r.Msg), `"capabilities":{"resources":{}}`) {
		t.Errorf("discover advertises more than resources: %s", r.Msg)
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
