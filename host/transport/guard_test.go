package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHostGuard(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	tests := []struct {
		name   string
		guard  HostGuard
		host   string
		origin string
		want   int
	}{
		{"loopback default", HostGuard{}, "127.0.0.1:8080", "", http.StatusTeapot},
		{"localhost origin", HostGuard{}, "localhost:8080", "http://localhost:3000", http.StatusTeapot},
		{"rebound host", HostGuard{}, "evil.example", "", http.StatusForbidden},
		{"foreign origin", HostGuard{}, "localhost", "https://evil.example", http.StatusForbidden},
		{"null origin", HostGuard{}, "localhost", "null", http.StatusForbidden},
		{"configured host", HostGuard{AllowedHosts: []string{"mcp.example.com"}}, "mcp.example.com:443", "", http.StatusTeapot},
		{"configured host replaces defaults", HostGuard{AllowedHosts: []string{"mcp.example.com"}}, "localhost", "", http.StatusForbidden},
		{"IP host refused by default", HostGuard{}, "10.1.2.3:9090", "", http.StatusForbidden},
		{"IP host with AnyIP", HostGuard{AnyIP: true}, "10.1.2.3:9090", "", http.StatusTeapot},
		{"IPv6 host with AnyIP", HostGuard{AnyIP: true}, "[fd00::1]:9090", "", http.StatusTeapot},
		{"name with AnyIP", HostGuard{AnyIP: true}, "evil.example:9090", "", http.StatusForbidden},
		{"numeric-looking name with AnyIP", HostGuard{AnyIP: true}, "10.1.2.3.evil.example", "", http.StatusForbidden},
		{"AnyIP still checks Origin", HostGuard{AnyIP: true}, "10.1.2.3", "http://evil.example", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			w := httptest.NewRecorder()
			tt.guard.Wrap(next).ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d", w.Code, tt.want)
			}
			if w.Code == http.StatusForbidden && !strings.Contains(w.Body.String(), `"code":-32600`) {
				t.Errorf("403 body %s is not a JSON-RPC error", w.Body)
			}
		})
	}
}
