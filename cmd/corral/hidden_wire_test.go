package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hiddenPolicy serves the conformance and issues plugins to alice in full
// and hides from bob the conformance plugin (its test:// scheme, prompts,
// template and tools), the issues plugin's repo:// scheme, every
// issues:// resource but issue 7 (the guide among them), the attachment
// template, the triage_issue prompt and the search_issues tool.
func hiddenPolicy() string {
	var b strings.Builder
	b.WriteString("auth:\n  tokens:\n")
	for _, p := range []string{"alice", "bob"} {
		sum := sha256.Sum256([]byte(wireTokens[p]))
		fmt.Fprintf(&b, "    - {sha256: %s, principal: %s}\n", hex.EncodeToString(sum[:]), p)
	}
	b.WriteString(`policy:
  - principals: [alice]
  - principals: [bob]
    plugins: [issues]
    schemes: [issues]
    resources: ["issues://7"]
    templates: ["issues://{number}"]
    prompts: ["!"]
    tools: ["!"]
`)
	return b.String()
}

// TestHiddenAnswersAsMissing: on bin/corral behind a policy, everything
// hidden from bob (a scheme of a plugin he may not see, a scheme of one
// he may see, a resource inside a scheme he may see, read by a URI a
// template matches or not, a prompt, a completion reference to a prompt
// or a template, a tool) answers with the same status, headers and body
// bytes as the same request for something that does not exist, on the
// 2026-07-28 wire and in a 2025-11-25 session (issue 13 item 5). Each
// pair names things of the same length, and the hidden name is replaced
// by the missing one in the hidden answer before the comparison; alice's
// answer to the hidden request proves the thing exists.
func TestHiddenAnswersAsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWire(t, hiddenPolicy(), "conformance", "issues")
	pairs := []struct {
		name            string
		method          string
		hidden, missing string // the name in the request (and in Mcp-Name)
		params          string // params members, %s for the name
		header          bool   // the name goes in Mcp-Name
	}{
		{"scheme of a hidden plugin", "resources/read", "test://static-text", "tesx://static-text", `"uri":%q`, true},
		{"scheme of a visible plugin", "resources/read", "repo://acme/rocket/issues/1", "repx://acme/rocket/issues/1", `"uri":%q`, true},
		{"resource in a visible scheme", "resources/read", "issues://guide/triage", "issues://guide/triagx", `"uri":%q`, true},
		{"templated resource in a visible scheme", "resources/read", "issues://1", "issues://9", `"uri":%q`, true},
		{"resource of a hidden template", "resources/read", "issues://1/attachments/login-error.png", "issues://1/attachments/login-error.pnx", `"uri":%q`, true},
		{"prompt of a hidden plugin", "prompts/get", "test_simple_prompt", "test_simple_prompx", `"name":%q`, true},
		{"prompt of a visible plugin", "prompts/get", "triage_issue", "triage_issux", `"name":%q,"arguments":{"issue_id":"7"}`, true},
		{"completion of a hidden prompt", "completion/complete", "triage_issue", "triage_issux",
			`"ref":{"type":"ref/prompt","name":%q},"argument":{"name":"area","value":""}`, false},
		{"completion of a hidden plugin's template", "completion/complete", "test://template/{id}/data", "test://template/{id}/datx",
			`"ref":{"type":"ref/resource","uri":%q},"argument":{"name":"id","value":""}`, false},
		{"completion of a hidden template", "completion/complete", "issues://{number}/attachments/{name}", "issues://{number}/attachments/{namx}",
			`"ref":{"type":"ref/resource","uri":%q},"argument":{"name":"number","value":""}`, false},
		{"tool of a hidden plugin", "tools/call", "test_simple_text", "test_simple_texx", `"name":%q,"arguments":{}`, true},
		{"tool of a visible plugin", "tools/call", "search_issues", "search_issuex", `"name":%q,"arguments":{"query":"login"}`, true},
	}
	eras := []struct {
		name    string
		session func(principal string) map[string]string // the headers of a request
		body    func(method, params string) string
	}{
		{"2026-07-28", func(string) map[string]string { return nil }, func(method, params string) string {
			return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `,` + modernMeta + `}}`
		}},
		{"2025-11-25", func(principal string) map[string]string {
			return map[string]string{"Mcp-Session-Id": s.initSession(t, principal)}
		}, func(method, params string) string {
			return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `}}`
		}},
	}
	for _, era := range eras {
		aliceSession, bobSession := era.session("alice"), era.session("bob")
		for _, tt := range pairs {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				if len(tt.hidden) != len(tt.missing) {
					t.Fatalf("names of different lengths: %q, %q", tt.hidden, tt.missing)
				}
				ask := func(principal, name string, session map[string]string) wireAnswer {
					h := map[string]string{}
					if era.name == "2026-07-28" {
						mcpName := ""
						if tt.header {
							mcpName = name
						}
						h = modernHeaders(tt.method, mcpName)
					}
					for k, v := range session {
						h[k] = v
					}
					return answerOf(t, s.post(t, principal, era.body(tt.method, fmt.Sprintf(tt.params, name)), h))
				}
				if seen := ask("alice", tt.hidden, aliceSession); seen.Status != 200 || strings.Contains(seen.Body, `"error"`) {
					t.Fatalf("alice, %s: %d %s; want a result (the thing exists)", tt.hidden, seen.Status, seen.Body)
				}
				got := ask("bob", tt.hidden, bobSession)
				if !strings.Contains(got.Body, `"error"`) {
					t.Fatalf("bob, hidden %s was served: %d %s", tt.hidden, got.Status, got.Body)
				}
				got.Body = strings.ReplaceAll(got.Body, tt.hidden, tt.missing)
				want := ask("bob", tt.missing, bobSession)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("hidden %s answers unlike missing %s (-missing +hidden):\n%s", tt.hidden, tt.missing, diff)
				}
			})
		}
	}
}
