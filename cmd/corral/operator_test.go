package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// opsToken is the bearer token of the principal "ops", which holds the
// operator role in operatorConfig.
const opsToken = "token-of-ops-0123456789"

// operatorConfig is wireAuth's alice and bob plus ops, the operator.
func operatorConfig() string {
	var b strings.Builder
	b.WriteString("auth:\n  operator: {principals: [ops]}\n  tokens:\n")
	for p, tok := range map[string]string{"alice": wireTokens["alice"], "bob": wireTokens["bob"], "ops": opsToken} {
		sum := sha256.Sum256([]byte(tok))
		fmt.Fprintf(&b, "    - {sha256: %s, principal: %s}\n", hex.EncodeToString(sum[:]), p)
	}
	b.WriteString("policy:\n  - principals: [alice]\n  - principals: [bob]\n    plugins: [issues]\n")
	return b.String()
}

// request sends method url with an optional bearer token, Host and extra
// headers, and returns the answer.
func request(t *testing.T, method, url, token, host string, headers map[string]string) wireAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return answerOf(t, resp)
}

// TestOperatorSurface: /metrics and /status are served on the admin
// listener, and on the MCP listener only to an operator token; anyone
// else gets the very answer of a path that does not exist (issue 13
// item 4).
func TestOperatorSurface(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWire(t, operatorConfig(), "issues")
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		unknown := request(t, method, s.base+"/no-such-path", "", "", nil)
		if unknown.Status != http.StatusNotFound {
			t.Fatalf("%s unknown path: %d, want 404", method, unknown.Status)
		}
		for _, path := range []string{"/metrics", "/status", "/console/", "/console/resources", "/console/read?uri=issues://1"} {
			for _, tok := range []struct{ who, token string }{
				{"no token", ""}, {"bob", wireTokens["bob"]}, {"alice", wireTokens["alice"]}, {"bad token", "not-a-token"},
			} {
				got := request(t, method, s.base+path, tok.token, "", nil)
				if diff := cmp.Diff(unknown, got); diff != "" {
					t.Errorf("%s %s, %s: unlike an unknown path (-unknown +got):\n%s", method, path, tok.who, diff)
				}
			}
		}
	}

	// GET / on the MCP listener points a visitor to /mcp and the console,
	// naming nothing an operator alone may see.
	if root := request(t, http.MethodGet, s.base+"/", "", "", nil); root.Status != http.StatusOK ||
		!strings.Contains(root.Body, "/console/") || strings.Contains(root.Body, "issues") {
		t.Errorf("GET / = %d %s", root.Status, root.Body)
	}
	for _, base := range []struct{ name, url, token, browses string }{
		{"MCP listener, operator token", s.base, opsToken, "ops"},
		{"admin listener, no token", s.admin, "", "anonymous"},
	} {
		c := request(t, http.MethodGet, base.url+"/console/", base.token, "", nil)
		if c.Status != http.StatusOK || !strings.Contains(c.Body, `data-plugin="issues"`) ||
			!strings.Contains(c.Body, `<b id="principal">`+base.browses+`</b>`) {
			t.Errorf("%s: /console/ = %d %.300s", base.name, c.Status, c.Body)
		}
		m := request(t, http.MethodGet, base.url+"/metrics", base.token, "", nil)
		if m.Status != http.StatusOK || !strings.Contains(m.Body, "corral_build_info{") ||
			!strings.Contains(m.Body, "corral_plugins_loaded 1") { // a plugin started asleep has no instance series yet
			t.Errorf("%s: /metrics = %d %.200s", base.name, m.Status, m.Body)
		}
		st := request(t, http.MethodGet, base.url+"/status", base.token, "", nil)
		var status struct {
			Ready bool `json:"ready"`
			Files []struct {
				Plugin, State string
			} `json:"files"`
		}
		if st.Status != http.StatusOK || st.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: /status = %d %v %s", base.name, st.Status, st.Header, st.Body)
		}
		if err := json.Unmarshal([]byte(st.Body), &status); err != nil {
			t.Fatalf("%s: /status: %v: %s", base.name, err, st.Body)
		}
		if !status.Ready || len(status.Files) != 1 || status.Files[0].Plugin != "issues" || status.Files[0].State != "serving" {
			t.Errorf("%s: /status = %s", base.name, st.Body)
		}
	}
}

// TestHostCheckedFirst: a request naming a foreign Host (a DNS-rebinding
// page) gets 403 on every endpoint that returns content, before
// authentication, so that no 401 challenge echoes the foreign host (issue
// 13 items 4 and 5); the probes answer any Host with a bare status.
func TestHostCheckedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWire(t, operatorConfig(), "issues")
	const evil = "evil.example"
	forbidden := func(what string, a wireAnswer) {
		t.Helper()
		if a.Status != http.StatusForbidden || !strings.Contains(a.Body, `"code":-32600`) ||
			a.Header.Get("WWW-Authenticate") != "" || strings.Contains(a.Body, evil) {
			t.Errorf("%s: %d %v %s; want 403 with a JSON-RPC error and no challenge", what, a.Status, a.Header, a.Body)
		}
	}
	for _, c := range []struct {
		what, method, url, token, host string
		headers                        map[string]string
	}{
		{"POST /mcp, no token", http.MethodPost, s.base + "/mcp", "", evil, nil},
		{"POST /mcp, bad token", http.MethodPost, s.base + "/mcp", "nope", evil, nil},
		{"POST /mcp, valid token", http.MethodPost, s.base + "/mcp", wireTokens["alice"], evil, nil},
		{"POST /mcp, foreign Origin", http.MethodPost, s.base + "/mcp", "", "", map[string]string{"Origin": "http://" + evil}},
		{"GET /ws, no token", http.MethodGet, s.base + "/ws", "", evil, nil},
		{"GET metadata", http.MethodGet, s.base + "/.well-known/oauth-protected-resource", "", evil, nil},
		{"GET /metrics, operator token", http.MethodGet, s.base + "/metrics", opsToken, evil, nil},
		{"GET /status, operator token", http.MethodGet, s.base + "/status", opsToken, evil, nil},
		{"GET /metrics, IP Host on the MCP listener", http.MethodGet, s.base + "/metrics", opsToken, "10.1.2.3:8080", nil},
		{"admin GET /metrics", http.MethodGet, s.admin + "/metrics", "", evil, nil},
		{"admin GET /status", http.MethodGet, s.admin + "/status", "", evil + ":9090", nil},
		{"admin GET /metrics, foreign Origin", http.MethodGet, s.admin + "/metrics", "", "", map[string]string{"Origin": "http://" + evil}},
		{"GET /console/, operator token", http.MethodGet, s.base + "/console/", opsToken, evil, nil},
		{"POST /console/prompt, operator token, foreign Origin", http.MethodPost, s.base + "/console/prompt", opsToken, "", map[string]string{"Origin": "http://" + evil}},
		{"admin GET /console/", http.MethodGet, s.admin + "/console/", "", evil, nil},
		{"admin GET /console/api/complete, foreign Origin", http.MethodGet, s.admin + "/console/api/complete?type=ref/prompt&ref=triage_issue&arg=issue_id", "", "", map[string]string{"Origin": "http://" + evil}},
		{"admin POST /console/prompt, foreign Origin", http.MethodPost, s.admin + "/console/prompt", "", "", map[string]string{"Origin": "http://" + evil}},
	} {
		forbidden(c.what, request(t, c.method, c.url, c.token, c.host, c.headers))
	}

	// Without a token and with an allowed Host, /mcp still challenges.
	if a := request(t, http.MethodPost, s.base+"/mcp", "", "", nil); a.Status != http.StatusUnauthorized ||
		!strings.Contains(a.Header.Get("WWW-Authenticate"), `resource_metadata="http://127.0.0.1:`) {
		t.Errorf("POST /mcp, no token, own Host: %d %v", a.Status, a.Header)
	}
	// A scraper dialing the admin listener by address passes.
	if a := request(t, http.MethodGet, s.admin+"/metrics", "", "10.1.2.3:9090", nil); a.Status != http.StatusOK {
		t.Errorf("admin /metrics, IP Host: %d %.100s", a.Status, a.Body)
	}

	for _, base := range []struct{ name, url, ready string }{{"MCP", s.base, "ok"}, {"admin", s.admin, "ok"}} {
		for _, path := range []string{"/healthz", "/readyz"} {
			for _, host := range []string{evil, "10.1.2.3:8080", "pod-7.internal"} {
				a := request(t, http.MethodGet, base.url+path, "", host, map[string]string{"Origin": "http://" + evil})
				if a.Status != http.StatusOK || a.Body != base.ready {
					t.Errorf("%s %s, Host %s: %d %q; want 200 %q", base.name, path, host, a.Status, a.Body, base.ready)
				}
			}
		}
	}
}
