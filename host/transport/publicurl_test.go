package transport

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestPublicOrigin: the scheme and host a client used, as the request
// says unless a trusted proxy reports them, and then only in the header
// configured and in a well-formed value.
func TestPublicOrigin(t *testing.T) {
	proxy := TrustedProxies{Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	fwd := TrustedProxies{Prefixes: proxy.Prefixes, Header: HeaderForwarded}
	tests := []struct {
		name    string
		t       TrustedProxies
		remote  string
		tls     bool
		headers map[string]string
		want    string
	}{
		{"direct", proxy, "203.0.113.5:4000", false, nil, "http://corral.internal:7337"},
		{"direct over TLS", proxy, "203.0.113.5:4000", true, nil, "https://corral.internal:7337"},
		{"untrusted peer's headers ignored", proxy, "203.0.113.5:4000", false,
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}, "http://corral.internal:7337"},
		{"trusted proxy", proxy, "10.1.2.3:4000", false,
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "mcp.example.com"}, "https://mcp.example.com"},
		{"nearest proxy's value", proxy, "10.1.2.3:4000", false,
			map[string]string{"X-Forwarded-Proto": "http, https", "X-Forwarded-Host": "client.example, mcp.example.com:8443"}, "https://mcp.example.com:8443"},
		{"bad values ignored", proxy, "10.1.2.3:4000", false,
			map[string]string{"X-Forwarded-Proto": "javascript", "X-Forwarded-Host": "mcp.example.com/evil"}, "http://corral.internal:7337"},
		{"Forwarded read when configured", fwd, "10.1.2.3:4000", false,
			map[string]string{"Forwarded": `for=198.51.100.7;proto=https;host="mcp.example.com"`, "X-Forwarded-Host": "other.example"}, "https://mcp.example.com"},
		{"X-Forwarded-* not read with Forwarded", fwd, "10.1.2.3:4000", false,
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "other.example"}, "http://corral.internal:7337"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://corral.internal:7337/mcp", nil)
			r.RemoteAddr = tt.remote
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if got := tt.t.PublicOrigin(r); got != tt.want {
				t.Errorf("PublicOrigin = %q, want %q", got, tt.want)
			}
		})
	}
}
