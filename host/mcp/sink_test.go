package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// chatty is a provider whose one tool reports progress 1, 1 (a repeat,
// dropped), 2 and logs at every level it can.
type chatty struct{}

func (chatty) Manifest() *abi.Manifest {
	return &abi.Manifest{ABI: abi.Major, Name: "chatty", Version: "1", Tools: []abi.Tool{{Name: "work", InputSchema: []byte(`{"type":"object"}`)}}}
}

func (chatty) Digest() string { return "" }

func (chatty) RejectOutput(abi.Op, error) {}

func (chatty) Call(_ context.Context, c catalog.Call) (catalog.Result, error) {
	if s := c.Sink; s != nil {
		s.Progress(1, 2, "half")
		s.Progress(1, 2, "again")
		s.Progress(2, 0, "")
		for _, l := range []string{"debug", "info", "warning", "error"} {
			s.Log(l, "chatty", l+" line")
		}
	}
	return catalog.Result{Body: []byte(`{"content":[{"type":"text","text":"done"}]}`)}, nil
}

var _ catalog.Provider = chatty{}

func TestRequestScopedNotifications(t *testing.T) {
	srv := newServer(t, chatty{})
	const call = `"method":"tools/call","params":{"name":"work",`
	prog := func(tok string) []string {
		return []string{
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1,"total":2,"message":"half"}}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":2}}`,
		}
	}
	logs := func(levels ...string) []string {
		var out []string
		for _, l := range levels {
			out = append(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`+l+`","logger":"chatty","data":"`+l+` line"}}`)
		}
		return out
	}
	cases := []struct {
		name     string
		legacy   bool
		setLevel string
		msg      string
		want     []string
	}{
		{name: "modern, nothing asked", msg: `{"jsonrpc":"2.0","id":1,` + call + modernMeta + `}}`},
		{name: "modern, progress token", msg: `{"jsonrpc":"2.0","id":1,` + call + `"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			want: prog(`"p1"`)},
		{name: "modern, log level warning", msg: `{"jsonrpc":"2.0","id":1,` + call + `"_meta":{"io.modelcontextprotocol/logLevel":"warning","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			want: logs("warning", "error")},
		{name: "legacy, no level", legacy: true, msg: `{"jsonrpc":"2.0","id":2,` + call + `"_meta":{"progressToken":7}}}`, want: prog(`7`)},
		{name: "legacy, level debug", legacy: true, setLevel: "debug", msg: `{"jsonrpc":"2.0","id":2,` + call + `"arguments":{}}}`,
			want: logs("debug", "info", "warning", "error")},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			req := Request{Notify: func(b []byte) error { got = append(got, string(b)); return nil }}
			if tt.legacy {
				req.Session = NewSession("s")
				srv.ServeBytes(context.Background(), req, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
				if tt.setLevel != "" {
					srv.ServeBytes(context.Background(), req, []byte(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+tt.setLevel+`"}}`))
				}
				got = nil
			}
			r := srv.ServeBytes(context.Background(), req, []byte(tt.msg))
			if r.Err != nil || !strings.Contains(string(r.Msg), `"done"`) {
				t.Fatalf("reply %s", r.Msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notifications (-want +got):\n%s", diff)
			}
		})
	}
}
