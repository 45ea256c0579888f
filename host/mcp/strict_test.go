package mcp

import (
	"strings"
	"testing"
)

// TestDecodeRefusesSmuggling: a repeated member, or one that matches a
// known member only by case, is refused (-32600 in the envelope, -32602 in
// params, the member named), where encoding/json let the last one win and
// a gateway reading the first would disagree with corral (go-sdk #805).
func TestDecodeRefusesSmuggling(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tests := []struct {
		name   string
		in     string
		code   int
		member string // quoted in the message
		id     string // echoed id
	}{
		{"case-variant uri", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://ok","URI":"b://other",` + meta + `}}`, CodeInvalidParams, `"URI"`, "1"},
		{"case-variant method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"tools/list"}`, CodeInvalidRequest, `"Method"`, "1"},
		{"two names", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe","name":"evil",` + meta + `}}`, CodeInvalidParams, `"name"`, "1"},
		{"two methods", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`, CodeInvalidRequest, `"method"`, "1"},
		{"two ids", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, CodeInvalidRequest, `"id"`, ""},
		{"two params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}`, CodeInvalidRequest, `"params"`, "1"},
		{"escaped repeat", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://ok","\u0075ri":"b://x"}}`, CodeInvalidParams, `"uri"`, "1"},
		{"folded by Unicode", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requeſtState":"x"}}`, CodeInvalidParams, `"requestState"`, "1"},
		{"meta version twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, CodeInvalidParams, `"io.modelcontextprotocol/protocolVersion"`, "1"},
		{"meta folded", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_META":{}}}`, CodeInvalidParams, `"_META"`, "1"},
		{"ref name twice", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"a","name":"b"},"argument":{"name":"x","value":""}}}`, CodeInvalidParams, `"name"`, "1"},
		{"context folded", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"context":{"Arguments":{}}}}`, CodeInvalidParams, `"Arguments"`, "1"},
		{"argument twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":"us","region":"eu"}}}`, CodeInvalidParams, `"region"`, "1"},
		{"prompt argument twice", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"1","a":"2"}}}`, CodeInvalidParams, `"a"`, "1"},
		{"input response twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{"k":{},"k":{}},"requestState":"s"}}`, CodeInvalidParams, `"k"`, "1"},
		{"unknown member twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":1,"x":2}}`, CodeInvalidParams, `"x"`, "1"},
		{"filter folded", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"ToolsListChanged":false}}}`, CodeInvalidParams, `"ToolsListChanged"`, "1"},
		{"jsonrpc twice", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"x"}`, CodeInvalidRequest, `"jsonrpc"`, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode accepted %s (method %q)", tt.in, m.Method)
			}
			if err.Code != tt.code || !strings.Contains(err.Message, tt.member) {
				t.Errorf("error = %d %q, want %d naming %s", err.Code, err.Message, tt.code, tt.member)
			}
			if got := string(IDOf(m)); got != tt.id {
				t.Errorf("id = %q, want %q", got, tt.id)
			}
		})
	}
}

// TestDecodeIgnoresUnknownAndOpaque: unknown members are ignored (MCP lets
// clients add them), and repeated names inside values the server only
// passes on are not its business.
func TestDecodeIgnoresUnknownAndOpaque(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","extra":{"a":1,"a":2},"params":{"name":"t","clientInfo":{},"arguments":{"a":{"x":1,"x":2}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1,"vendor/x":{"d":1,"d":2}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`,
	} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("Decode(%s): %v", in, err)
		}
	}
}
