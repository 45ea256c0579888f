package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/transport"
)

// benchCalls are the four calls of `make bench`'s row 2, as
// (method, Mcp-Name, params members).
var benchCalls = []struct{ method, name, params string }{
	{"resources/read", "bfx000://doc", `"uri":"bfx000://doc",`},
	{"prompts/get", "greet", `"name":"greet","arguments":{"name":"cand-0042","style":"concise"},`},
	{"completion/complete", "", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"cand-01"},`},
	{"resources/list", "", ""},
}

// BenchmarkStack is one request through corral's whole HTTP stack with the
// native fixture provider, in process (no sockets): the transport's
// ServeHTTP, the protocol layer, the catalog and the provider. It is what
// the corral-native row of `make bench` adds over the net/http floor, so
// profile it to find what to make cheaper:
//
//	go test -run '^$' -bench Stack/resources/read -cpuprofile cpu.out ./cmd/corral-bench
func BenchmarkStack(b *testing.B) {
	set, err := catalog.NewSet([]catalog.Provider{NewFixture("bfx000", 100)}, catalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := transport.NewHTTPHandler(mcp.NewServer(catalog.New(set), mcp.Options{Name: "corral", Version: "bench"}), transport.HTTPOptions{})
	defer h.Close()
	for _, c := range benchCalls {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":{` + c.params +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		b.Run(c.method, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", c.method)
				if c.name != "" {
					req.Header.Set("Mcp-Name", c.name)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"result":`) {
					b.Fatalf("%s: %d %s", c.method, w.Code, w.Body.String())
				}
			}
		})
	}
}
