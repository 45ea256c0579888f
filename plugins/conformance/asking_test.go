//go:build !wasip1

package main

import (
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func TestAskingTools(t *testing.T) {
	h := corral.NewFakeHost(abi.CapNotify, abi.CapLog)
	defer corral.UseHost(h)()
	p := newPlugin()
	tests := []struct {
		name   string
		req    string
		status abi.Status
		want   []string // substrings of the response
	}{
		{"elicitation asks", `{"name":"test_elicitation","arguments":{"message":"Hi?"},"principal":{"id":"c"}}`, abi.StatusInputRequired,
			[]string{`"answer":{"method":"elicitation/create"`, `"message":"Hi?"`, `"required":["username","email"]`}},
		{"elicitation answered", `{"name":"test_elicitation","arguments":{"message":"Hi?"},"principal":{"id":"c"},"inputResponses":{"answer":{"action":"accept","content":{"username":"u","email":"e"}}}}`, abi.StatusOK,
			[]string{`User response: action=accept, content={\"email\":\"e\",\"username\":\"u\"}`}},
		{"elicitation declined", `{"name":"test_elicitation","arguments":{"message":"Hi?"},"principal":{"id":"c"},"inputResponses":{"answer":{"action":"decline"}}}`, abi.StatusOK,
			[]string{`User response: action=decline, content={}`}},
		{"sampling asks", `{"name":"test_sampling","arguments":{"prompt":"P?"},"principal":{"id":"c"}}`, abi.StatusInputRequired,
			[]string{`"method":"sampling/createMessage"`, `"text":"P?"`, `"maxTokens":100`}},
		{"sampling answered", `{"name":"test_sampling","arguments":{"prompt":"P?"},"principal":{"id":"c"},"inputResponses":{"answer":{"role":"assistant","content":{"type":"text","text":"A"},"model":"m"}}}`, abi.StatusOK,
			[]string{`LLM response: A`}},
		{"SEP-1034 asks", `{"name":"test_elicitation_sep1034_defaults","principal":{"id":"c"}}`, abi.StatusInputRequired,
			[]string{`"default":"John Doe"`, `"default":30`, `"default":95.5`, `"default":"active"`, `"default":true`}},
		{"SEP-1330 asks", `{"name":"test_elicitation_sep1330_enums","principal":{"id":"c"}}`, abi.StatusInputRequired,
			[]string{`"enumNames":["Option One","Option Two","Option Three"]`, `"oneOf":[{"const":"value1","title":"First Option"}`,
				`"items":{"anyOf":[{"const":"value1","title":"First Choice"}`, `"items":{"enum":["option1","option2","option3"],"type":"string"}`}},
		{"SEP-1330 answered", `{"name":"test_elicitation_sep1330_enums","principal":{"id":"c"},"inputResponses":{"answer":{"action":"accept","content":{"untitledMulti":["option1"]}}}}`, abi.StatusOK,
			[]string{`Elicitation completed: action=accept, content={\"untitledMulti\":[\"option1\"]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := p.Handle(abi.OpCallTool, []byte(tt.req))
			if status != tt.status {
				t.Errorf("status = %d, want %d: %s", status, tt.status, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("response %s\ndoes not contain %s", out, w)
				}
			}
		})
	}
}
