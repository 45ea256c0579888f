package plugin

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestEgressDeniedExplained: an HTTP request the policy refuses is logged
// once per destination with the host and port refused and the grant that
// would allow it (not only counted in a metric label without the port);
// the guest sees ErrnoDenied each time.
func TestEgressDeniedExplained(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	tu, _ := url.Parse(target.URL)
	tests := []struct {
		name   string
		grants Grants
		url    string
		want   []string
	}{
		{"host and port not granted", Grants{HTTPHosts: []string{"example.com"}, AllowPrivate: true}, target.URL + "/x",
			[]string{"host not granted", "host=127.0.0.1", "port=" + tu.Port(), "grant=plugin.caps.grants.http.hosts",
				`add \"127.0.0.1:` + tu.Port() + `\" (this port only) or \"127.0.0.1\" (any port) to plugin.caps.grants.http.hosts`}},
		{"default port named", Grants{HTTPHosts: []string{"example.com"}}, "https://api.example.org/v1",
			[]string{"host=api.example.org", "port=443", `add \"api.example.org:443\"`}},
		{"granted but not public", Grants{HTTPHosts: []string{"127.0.0.1"}}, target.URL + "/x",
			[]string{"the address is not public", "address=127.0.0.1", "port=" + tu.Port(), "grant=plugin.caps.grants.http.allowPrivate"}},
		{"scheme", Grants{HTTPHosts: []string{"example.com"}}, "ftp://example.com/f",
			[]string{"reason=\"scheme not allowed\"", "only http and https"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "caps", Config{PoolSize: 1, Grants: tt.grants,
				GrantKeys: map[string]string{abi.CapHTTP: "plugin.caps.grants.http.hosts"}})
			for range 3 {
				if r := callCaps(t, p, httpReq(tt.url)); r.N != abi.ErrnoDenied {
					t.Fatalf("n = %d (%s), want ErrnoDenied", r.N, r.Out)
				}
			}
			var lines []string
			for _, l := range strings.Split(e.logs.String(), "\n") {
				if strings.Contains(l, "plugin HTTP request refused") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 {
				t.Fatalf("%d refusal lines for 3 refused calls, want 1:\n%s", len(lines), e.logs)
			}
			if !strings.Contains(lines[0], "level=WARN") {
				t.Errorf("refusal logged below WARN: %s", lines[0])
			}
			for _, w := range tt.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("refusal line lacks %s:\n%s", w, lines[0])
				}
			}
		})
	}
}
