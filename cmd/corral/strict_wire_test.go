package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWireSmuggling sends the request shapes that two JSON readers read
// apart to the real bin/corral over HTTP on loopback: a gateway in front
// of corral that authorizes by the first member (or by Mcp-Name) and
// corral that routed by the last one disagreed about what was asked.
// Each is refused, naming the member: -32600 (HTTP 400) for the envelope,
// -32602 for params; nothing is served.
func TestWireSmuggling(t *testing.T) {
	s := startWire(t, wireAuth(), "conformance")
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		code    int
		member  string
	}{
		{"case-variant uri",
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text","URI":"test://static-binary",` + modernMeta + `}}`,
			modernHeaders("resources/read", "test://static-binary"), -32602, `"URI"`},
		{"case-variant method",
			`{"jsonrpc":"2.0","id":2,"Method":"tools/call","method":"tools/list","params":{` + modernMeta + `}}`,
			modernHeaders("tools/list", ""), -32600, `"Method"`},
		{"two names",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","name":"test_error_handling",` + modernMeta + `}}`,
			modernHeaders("tools/call", "test_error_handling"), -32602, `"name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := answerOf(t, s.post(t, "alice", tt.body, tt.headers))
			var resp struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(a.Body), &resp); err != nil {
				t.Fatalf("status %d, body %q: %v", a.Status, a.Body, err)
			}
			if resp.Error == nil {
				t.Fatalf("served (status %d): %.200s", a.Status, a.Body)
			}
			if resp.Error.Code != tt.code || !strings.Contains(resp.Error.Message, tt.member) {
				t.Errorf("error %d %q, want %d naming %s", resp.Error.Code, resp.Error.Message, tt.code, tt.member)
			}
			if tt.code == -32600 && a.Status != 400 {
				t.Errorf("status %d, want 400", a.Status)
			}
		})
	}
}
