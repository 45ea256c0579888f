//go:build !wasip1

package main

import (
	"testing"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// TestExample runs the provider's operations natively on a FakeHost, the
// Go SDK's way of unit-testing a plugin; interop's TestJudge checks the
// built module over the wire.
func TestExample(t *testing.T) {
	h := corral.NewFakeHost(abi.CapKV, abi.CapNotify)
	defer corral.UseHost(h)()
	p := newPlugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		op     abi.Op
		req    string
		status abi.Status
		want   string
	}{
		{"readme", abi.OpReadResource, `{"uri":"example://readme"}`, abi.StatusOK,
			`{"contents":[{"uri":"example://readme","mimeType":"text/plain","text":"` + readmeText + `"}]}`},
		{"greeting", abi.OpReadResource, `{"uri":"example://greetings/fr","template":"example://greetings/{lang}","variables":{"lang":"fr"}}`,
			abi.StatusOK, `{"contents":[{"uri":"example://greetings/fr","mimeType":"text/plain","text":"Bonjour"}]}`},
		{"no greeting", abi.OpReadResource, `{"uri":"example://greetings/xx","template":"example://greetings/{lang}","variables":{"lang":"xx"}}`,
			abi.StatusError, `{"code":"not_found","message":"no greeting at example://greetings/xx"}`},
		{"complete", abi.OpComplete, `{"ref":{"type":"ref/resource","uri":"example://greetings/{lang}"},"argument":{"name":"lang","value":"e"}}`,
			abi.StatusOK, `{"completion":{"values":["en","es"],"total":2}}`},
		{"prompt", abi.OpGetPrompt, `{"name":"greet","arguments":{"name":"Ada \"A\""}}`, abi.StatusOK,
			`{"messages":[{"role":"user","content":{"type":"text","text":"Say Hello to Ada \"A\"."}},` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"example://greetings/en","mimeType":"text/plain","text":"Hello"}}}]}`},
		{"unknown language", abi.OpGetPrompt, `{"name":"greet","arguments":{"name":"x","lang":"xx"}}`, abi.StatusError,
			`{"code":"invalid_params","message":"unknown language: xx"}`},
		{"shout", abi.OpCallTool, `{"name":"shout","arguments":{"text":"héllo"}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"HéLLO"}]}`},
		{"increment", abi.OpCallTool, `{"name":"increment","arguments":{}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"count: 1"}],"structuredContent":{"count":1}}`},
		{"counter", abi.OpReadResource, `{"uri":"example://counter"}`, abi.StatusOK,
			`{"contents":[{"uri":"example://counter","mimeType":"text/plain","text":"1"}]}`},
		{"reset asks", abi.OpCallTool, `{"name":"reset","arguments":{}}`, abi.StatusInputRequired,
			`{"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Reset the counter?",` +
				`"requestedSchema":{"properties":{"ok":{"type":"boolean"}},"required":["ok"],"type":"object"}}}}}`},
		{"reset", abi.OpCallTool, `{"name":"reset","arguments":{},"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}}`,
			abi.StatusOK, `{"content":[{"type":"text","text":"counter reset"}]}`},
		{"counter after reset", abi.OpReadResource, `{"uri":"example://counter"}`, abi.StatusOK,
			`{"contents":[{"uri":"example://counter","mimeType":"text/plain","text":"0"}]}`},
		{"probe without config", abi.OpCallTool, `{"name":"probe","arguments":{"path":"/r/a","url":"http://x/"}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"config: corral: config_get: permission denied"}],"isError":true}`},
	}
	for _, tt := range tests {
		status, out := p.Handle(tt.op, []byte(tt.req))
		if status != tt.status || string(out) != tt.want {
			t.Errorf("%s: %d %s\nwant %d %s", tt.name, status, out, tt.status, tt.want)
		}
	}
	if n := h.Notifications(); len(n) != 1 || n[0].Kind != abi.NotifyResourceUpdated || n[0].Payload != counterURI {
		t.Errorf("notifications %+v, want one resource update of %s", n, counterURI)
	}
}
