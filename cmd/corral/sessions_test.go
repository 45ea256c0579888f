package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const legacyInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`

// initSession opens a legacy session as principal and returns its id.
func (s *wireServer) initSession(t *testing.T, principal string) string {
	t.Helper()
	resp := s.post(t, principal, legacyInitialize, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("%s's initialize: status %d, session %q", principal, resp.StatusCode, sid)
	}
	return sid
}

// pingStatus is the HTTP status of a ping in session sid as principal.
func (s *wireServer) pingStatus(t *testing.T, principal, sid string) int {
	t.Helper()
	resp := s.post(t, principal, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid})
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// metric reads one unlabelled sample from the admin listener's /metrics.
func (s *wireServer) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` ([0-9.e+]+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return f
}

// TestSessionFloodEvictsOnlyItsOwn: bob opening 1,100 legacy sessions on
// bin/corral (more than the 1,024 in all) ends only bob's own least
// recently used ones; alice's session, opened first, still answers (issue
// 13 item 2: it answered 404 "Session not found").
func TestSessionFloodEvictsOnlyItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWire(t, wireAuth(), "conformance")
	alice := s.initSession(t, "alice")
	var bob []string
	for range 1100 {
		bob = append(bob, s.initSession(t, "bob"))
	}
	if got := s.pingStatus(t, "alice", alice); got != http.StatusOK {
		t.Errorf("alice's session after bob's 1,100: ping %d, want 200", got)
	}
	if got := s.pingStatus(t, "bob", bob[len(bob)-1]); got != http.StatusOK {
		t.Errorf("bob's newest session: ping %d, want 200", got)
	}
	if got := s.pingStatus(t, "bob", bob[0]); got != http.StatusNotFound {
		t.Errorf("bob's oldest session, past his quota: ping %d, want 404", got)
	}
	if got := s.metric(t, "corral_sessions_evicted_total"); got != 1100-64 {
		t.Errorf("corral_sessions_evicted_total = %v, want %d", got, 1100-64)
	}
	if got := s.metric(t, "corral_sessions"); got != 65 {
		t.Errorf("corral_sessions = %v, want 65", got)
	}
}

// TestSessionsFullRefuses: with every session slot in use by clients
// within their quotas (http.maxSessions 3, http.maxSessionsPerClient 2),
// bin/corral refuses a new session with 503 and a JSON-RPC error, and the
// live sessions keep working.
func TestSessionsFullRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWireEnv(t, []string{"CORRAL_HTTP_MAX_SESSIONS=3", "CORRAL_HTTP_MAX_SESSIONS_PER_CLIENT=2"}, wireAuth(), "conformance")
	live := map[string]string{}
	live[s.initSession(t, "alice")] = "alice"
	live[s.initSession(t, "alice")] = "alice"
	live[s.initSession(t, "bob")] = "bob"
	got := answerOf(t, s.post(t, "bob", legacyInitialize, nil))
	if got.Status != http.StatusServiceUnavailable || got.Header.Get("Mcp-Session-Id") != "" ||
		!strings.Contains(got.Body, `"code":-32600`) || !strings.Contains(got.Body, "all 3 sessions are in use") {
		t.Errorf("bob's second initialize with every slot in use: %+v; want 503, no session, -32600", got)
	}
	for sid, who := range live {
		if st := s.pingStatus(t, who, sid); st != http.StatusOK {
			t.Errorf("%s's session after the refusal: ping %d, want 200", who, st)
		}
	}
	if got := s.metric(t, "corral_sessions_refused_total"); got != 1 {
		t.Errorf("corral_sessions_refused_total = %v, want 1", got)
	}
}
