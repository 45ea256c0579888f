package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHiddenToolHeadersAnswerAsMissing: a tools/call whose Mcp-Param-*
// headers disagree with its arguments, for a tool the caller may not see,
// answers with the same status, headers and bytes as the same call to a
// tool that does not exist: the header check runs after the visibility
// check, so it cannot tell bob that the tool exists or what its arguments
// are called (issue 13 item 5).
func TestHiddenToolHeadersAnswerAsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	hidden := startWire(t, wireAuth(), "conformance", "issues") // bob may not see conformance's tools
	missing := startWire(t, wireAuth(), "issues")               // no such tool at all
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_mirrored_headers","arguments":{"region":"eu"},` + modernMeta + `}}`
	headers := modernHeaders("tools/call", "test_mirrored_headers")
	headers["Mcp-Param-Region"] = "us" // disagrees with the body

	// The check itself works for a principal who may see the tool.
	seen := answerOf(t, hidden.post(t, "alice", call, headers))
	if seen.Status != 400 || !strings.Contains(seen.Body, "-32020") {
		t.Fatalf("alice, visible tool, mismatched header: %d %s; want 400 -32020", seen.Status, seen.Body)
	}
	got := answerOf(t, hidden.post(t, "bob", call, headers))
	want := answerOf(t, missing.post(t, "bob", call, headers))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hidden tool answers unlike a missing one (-missing +hidden):\n%s", diff)
	}
	if got.Status != 200 || !strings.Contains(got.Body, "-32602") {
		t.Errorf("bob, hidden tool: %d %s; want 200 -32602 unknown tool", got.Status, got.Body)
	}
}
