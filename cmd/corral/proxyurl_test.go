package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestResourceMetadataBehindProxy: bin/corral behind a trusted proxy
// (http.trustedProxies) names the proxy's public https address in a 401's
// RFC 9728 resource_metadata URL and in the metadata document's resource;
// the same headers from a peer that is not trusted change nothing.
func TestResourceMetadataBehindProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fwd := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "mcp.example.com"}
	tests := []struct {
		name     string
		env      []string
		metadata string // the resource_metadata URL; "" for the server's own
		resource string
	}{
		{"trusted", []string{"CORRAL_HTTP_TRUSTED_PROXIES=127.0.0.1"},
			"https://mcp.example.com/.well-known/oauth-protected-resource", "https://mcp.example.com/mcp"},
		{"not trusted", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startWireEnv(t, tt.env, wireAuth(), "issues")
			own := s.base
			if tt.metadata == "" {
				tt.metadata, tt.resource = own+"/.well-known/oauth-protected-resource", own+"/mcp"
			}
			resp := s.post(t, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`, fwd)
			resp.Body.Close()
			want := `resource_metadata="` + tt.metadata + `"`
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
				t.Errorf("%d, WWW-Authenticate %q; want 401 with %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
			}
			req, _ := http.NewRequest("GET", s.base+"/.well-known/oauth-protected-resource", nil)
			for k, v := range fwd {
				req.Header.Set(k, v)
			}
			mresp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := io.ReadAll(mresp.Body)
			mresp.Body.Close()
			if !strings.Contains(string(doc), `"resource":"`+tt.resource+`"`) {
				t.Errorf("metadata document %s, want resource %s", doc, tt.resource)
			}
		})
	}
}
