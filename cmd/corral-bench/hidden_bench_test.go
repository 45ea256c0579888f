package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/transport"
)

// hiddenProbes are the pairs BenchmarkHidden times: the same request for
// something a policy hides from the caller and for something that does
// not exist, the names of equal length. The control pair is two missing
// prompts: its ratio is the method's own error. `make bench` row 8 reads
// them.
var hiddenProbes = []struct {
	kind, method    string
	hidden, missing string // the name probed (and its Mcp-Name)
	params          string // params members, with NAME for the name
	header          bool   // the name goes in Mcp-Name
}{
	{"read", "resources/read", "priv://docs/plans/2027.txt", "nope://docs/plans/2027.txt", `"uri":"NAME",`, true},
	{"prompt", "prompts/get", "private_plan", "missing_plan", `"name":"NAME","arguments":{"year":"2027"},`, true},
	{"control", "prompts/get", "no_plan_one", "no_plan_two", `"name":"NAME","arguments":{"year":"2027"},`, true},
	{"tool", "tools/call", "private_tool", "missing_tool", `"name":"NAME","arguments":{},`, true},
	{"complete", "completion/complete", "priv://{number}", "nope://{number}",
		`"ref":{"type":"ref/resource","uri":"NAME"},"argument":{"name":"number","value":""},`, false},
}

// hiddenFixture is a private plugin: the priv:// scheme with four
// templates (a hidden read matches the last), a prompt and a tool.
func hiddenFixture() catalog.Provider {
	return &catalogtest.Provider{
		M: abi.Manifest{Name: "private", Version: "1.0.0", ABI: abi.Major, Schemes: []string{"priv"},
			Templates: []abi.Template{
				{URITemplate: "priv://{number}", Name: "item", Complete: []string{"number"}},
				{URITemplate: "priv://{number}/attachments/{name}", Name: "attachment"},
				{URITemplate: "priv://repo/{owner}/{repo}/issues/{number}", Name: "repo-issue"},
				{URITemplate: "priv://docs/{+path}", Name: "doc"},
			},
			Prompts: []abi.Prompt{{Name: "private_plan", Arguments: []abi.PromptArgument{{Name: "year", Required: true}}}},
			Tools:   []abi.Tool{{Name: "private_tool", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			return map[string][]textContents{"contents": {{URI: r.URI, MimeType: "text/plain", Text: "private"}}}, nil
		},
	}
}

// BenchmarkHidden times, side by side in one loop, a request for
// something hidden from the caller and the same request for something
// missing, through the whole in-process HTTP stack with a policy (bob
// sees the fixture, not the private plugin). Each iteration serves one of
// each, in alternating order, and times only ServeHTTP; the metrics are
// the median time of each (a median, as a prober would take, so that the
// other processes of a shared machine weigh less) and their ratio,
// hidden ÷ missing: a ratio far from 1 is a timing oracle telling bob
// that the hidden thing exists.
//
//	go test -run '^$' -bench Hidden -benchtime 20000x -count 5 ./cmd/corral-bench
func BenchmarkHidden(b *testing.B) {
	pol, err := auth.NewPolicy([]auth.Rule{
		{Groups: []string{"staff"}},
		{Principals: []string{"bob"}, Plugins: []string{"bfx000"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	set, err := catalog.NewSet([]catalog.Provider{NewFixture("bfx000", 100), hiddenFixture()},
		catalog.Options{Policy: pol, Authenticated: true})
	if err != nil {
		b.Fatal(err)
	}
	h := transport.NewHTTPHandler(mcp.NewServer(catalog.New(set), mcp.Options{Name: "corral", Version: "bench"}),
		transport.HTTPOptions{Principal: abi.Principal{ID: "bob"}})
	defer h.Close()
	for _, pr := range hiddenProbes {
		request := func(name string) func() *http.Request {
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + pr.method + `","params":{` + strings.ReplaceAll(pr.params, "NAME", name) +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
			return func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", pr.method)
				if pr.header {
					req.Header.Set("Mcp-Name", name)
				}
				return req
			}
		}
		hidden, missing := request(pr.hidden), request(pr.missing)
		b.Run(pr.kind, func(b *testing.B) {
			b.ReportAllocs()
			serve := func(newReq func() *http.Request) time.Duration {
				req, w := newReq(), httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(w, req)
				d := time.Since(t0)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"error":`) {
					b.Fatalf("%s: %d %s; want an error", pr.kind, w.Code, w.Body.String())
				}
				return d
			}
			var th, tm []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					th = append(th, serve(hidden))
					tm = append(tm, serve(missing))
				} else {
					tm = append(tm, serve(missing))
					th = append(th, serve(hidden))
				}
			}
			h, m := medianDur(th), medianDur(tm)
			b.ReportMetric(float64(h), "hidden-ns/op")
			b.ReportMetric(float64(m), "missing-ns/op")
			b.ReportMetric(float64(h)/float64(m), "hidden/missing")
		})
	}
}

// medianDur returns the median of d (sorting it).
func medianDur(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
