package auth

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusalLogsClientAddr: a refused request is logged under the
// client address Options.ClientAddr names (behind a trusted proxy, the
// proxy's report), and under the TCP peer without it; the resource_metadata
// URL is built from Options.Origin.
func TestRefusalLogsClientAddr(t *testing.T) {
	for _, tt := range []struct {
		name       string
		clientAddr func(*http.Request) string
		want       string
	}{
		{"proxy's report", func(*http.Request) string { return "198.51.100.7" }, "remote=198.51.100.7"},
		{"peer", nil, "remote=10.0.0.2:5555"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			a, err := New(Options{Tokens: []StaticToken{{SHA256: strings.Repeat("ab", 32), Principal: "x"}},
				Logger: slog.New(slog.NewTextHandler(&logs, nil)), ClientAddr: tt.clientAddr,
				Origin: func(*http.Request) string { return "https://mcp.example.com" }})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("POST", "http://corral.internal/mcp", nil)
			r.RemoteAddr = "10.0.0.2:5555"
			w := httptest.NewRecorder()
			a.Middleware(http.NotFoundHandler()).ServeHTTP(w, r)
			if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`) {
				t.Errorf("%d %q", w.Code, w.Header().Get("WWW-Authenticate"))
			}
			if !strings.Contains(logs.String(), tt.want) {
				t.Errorf("log %q lacks %s", logs.String(), tt.want)
			}
		})
	}
}
