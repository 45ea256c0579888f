package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// TestErrorMapping holds the host to ABI.md §10's table "What the client
// sees": each guest failure gives the client one JSON-RPC error, with the
// message and data the table names, and nothing of the guest's own data.
func TestErrorMapping(t *testing.T) {
	secret := json.RawMessage(`{"secret":"operator only"}`)
	fail := func(code string) *abi.Error {
		return &abi.Error{Code: code, Message: "guest says " + code, Data: secret}
	}
	p := &catalogtest.Provider{
		M: abi.Manifest{Name: "m", Version: "1", ABI: abi.Major, Schemes: []string{"m"},
			Resources: []abi.Resource{{URI: "m://static", Name: "static"}},
			Prompts:   []abi.Prompt{{Name: "p", Arguments: []abi.PromptArgument{{Name: "a", Required: true}}}, {Name: "gone"}},
			Tools:     []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
		Read: func(_ context.Context, req abi.ReadResourceRequest) (any, error) {
			switch req.URI {
			case "m://trap":
				return nil, errors.New("wasm trap: unreachable")
			case "m://internal":
				return nil, fail(abi.CodeInternal)
			case "m://unavailable":
				return nil, fail(abi.CodeUnavailable)
			case "m://unknown-code":
				return nil, fail("teapot")
			case "m://not-found":
				return nil, fail(abi.CodeNotFound)
			case "m://invalid":
				return nil, fail(abi.CodeInvalidParams)
			case "m://foreign":
				return map[string]any{"contents": []map[string]string{{"uri": "x://elsewhere", "text": "hi"}}}, nil
			}
			return nil, errors.New("unexpected uri " + req.URI)
		},
		Prompt: func(_ context.Context, req abi.GetPromptRequest) (any, error) {
			return nil, fail(abi.CodeNotFound)
		},
	}
	s := newServer(t, p)
	read := func(uri string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `",` + modernMeta + `}}`
	}
	tests := []struct {
		name, msg   string
		legacy      bool
		code        int
		message     string
		data        string // "" for none
		guestCalled bool
	}{
		{"trap", read("m://trap"), false, CodeInternalError, "the plugin failed", `{"plugin":"m"}`, true},
		{"internal", read("m://internal"), false, CodeInternalError, "the plugin failed", `{"plugin":"m"}`, true},
		{"unavailable", read("m://unavailable"), false, CodeInternalError, "the plugin failed", `{"plugin":"m"}`, true},
		{"unknown code", read("m://unknown-code"), false, CodeInternalError, "the plugin failed", `{"plugin":"m"}`, true},
		{"invalid output", read("m://foreign"), false, CodeInternalError, "the plugin returned invalid output", `{"plugin":"m"}`, true},
		{"not_found read", read("m://not-found"), false, CodeInvalidParams, "Resource not found", `{"uri":"m://not-found"}`, true},
		{"not_found read 2025", read("m://not-found"), true, CodeResourceNotFoundLegacy, "Resource not found", `{"uri":"m://not-found"}`, true},
		{"unserved scheme", read("zz://x"), false, CodeInvalidParams, "Resource not found", `{"uri":"zz://x"}`, false},
		{"invalid_params", read("m://invalid"), false, CodeInvalidParams, "guest says invalid_params", `{"uri":"m://invalid"}`, true},
		{"not_found prompt", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"gone",` + modernMeta + `}}`,
			false, CodeInvalidParams, "guest says not_found", "", true},
		{"unknown prompt", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope",` + modernMeta + `}}`,
			false, CodeInvalidParams, "unknown prompt", `{"name":"nope"}`, false},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",` + modernMeta + `}}`,
			false, CodeInvalidParams, "unknown tool", `{"name":"nope"}`, false},
		{"missing prompt argument", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p",` + modernMeta + `}}`,
			false, CodeInvalidParams, "missing required argument a of prompt p", `{"name":"a"}`, false},
		{"tool arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1],` + modernMeta + `}}`,
			false, CodeInvalidParams, "Invalid params: arguments must be an object.", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, msg := Request{}, tt.msg
			if tt.legacy {
				req.Session = legacySession(t, s, `{}`)
				msg = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"m://not-found"}}`
			}
			before := p.Calls()
			r := s.ServeBytes(context.Background(), req, []byte(msg))
			if r.Err == nil {
				t.Fatalf("no error: %s", r.Msg)
			}
			if r.Err.Code != tt.code || r.Err.Message != tt.message || string(r.Err.Data) != tt.data {
				t.Errorf("error %d %q data %s; want %d %q data %s", r.Err.Code, r.Err.Message, r.Err.Data, tt.code, tt.message, tt.data)
			}
			if called := p.Calls() > before; called != tt.guestCalled {
				t.Errorf("provider called: %v, want %v", called, tt.guestCalled)
			}
			if strings.Contains(string(r.Msg), "operator only") {
				t.Errorf("the guest's data reached the client: %s", r.Msg)
			}
		})
	}
}
