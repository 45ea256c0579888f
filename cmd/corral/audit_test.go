package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/audit"
)

// TestAuditLog: with audit.file set, bin/corral writes one line per
// request with who, what, which plugin and how it ended: a read, a read
// the policy refused (answered to bob as missing, recorded as denied), a
// read of nothing, a tool call. No line holds content or arguments.
func TestAuditLog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	s := startWire(t, hiddenPolicy()+"audit:\n  file: "+file+"\n", "issues")
	read := func(who, uri string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q,%s}}`, uri, modernMeta)
		return answerOf(t, s.post(t, who, body, modernHeaders("resources/read", uri))).Body
	}
	if a := read("alice", "issues://1"); !strings.Contains(a, "Login fails with SSO") {
		t.Fatalf("alice reads issues://1: %s", a)
	}
	if a := read("bob", "issues://1"); !strings.Contains(a, "-32602") {
		t.Fatalf("bob reads issues://1 (hidden): %s", a)
	}
	read("bob", "nope://x")
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"zebra-secret-words"},%s}}`, modernMeta)
	answerOf(t, s.post(t, "alice", call, modernHeaders("tools/call", "search_issues")))

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got []audit.Record
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		r, err := audit.ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Time.IsZero() || r.DurationMS < 0 {
			t.Errorf("line without time or duration: %s", sc.Text())
		}
		got = append(got, r)
	}
	want := []audit.Record{
		{Principal: "alice", Method: "resources/read", Target: "issues://1", Plugin: "issues", Outcome: audit.OutcomeOK},
		{Principal: "bob", Method: "resources/read", Target: "issues://1", Plugin: "issues", Outcome: audit.OutcomeDenied, Code: -32602},
		{Principal: "bob", Method: "resources/read", Target: "nope://x", Outcome: audit.OutcomeError, Code: -32602},
		{Principal: "alice", Method: "tools/call", Target: "search_issues", Plugin: "issues", Outcome: audit.OutcomeOK},
	}
	if len(got) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", len(got), len(want), raw)
	}
	for i, w := range want {
		g := got[i]
		if g.Principal != w.Principal || g.Method != w.Method || g.Target != w.Target || g.Plugin != w.Plugin ||
			g.Outcome != w.Outcome || g.Code != w.Code || g.V != audit.Version {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
	for _, private := range []string{"Login fails with SSO", "zebra-secret-words", wireTokens["alice"], wireTokens["bob"]} {
		if bytes.Contains(raw, []byte(private)) {
			t.Errorf("the audit log holds %q:\n%s", private, raw)
		}
	}
}
