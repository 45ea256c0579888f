package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// call is one MCP request on the 2026-07-28 wire: a stateless POST whose
// headers mirror the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name).
type call struct {
	method string
	name   string // Mcp-Name, when the method has one
	params string // JSON members of params before _meta, with a trailing comma
}

// body returns the JSON-RPC request.
func (c call) body() []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":{` + c.params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
}

// The fixture's four calls.
var (
	callRead     = call{"resources/read", docURI, `"uri":"` + docURI + `",`}
	callPrompt   = call{"prompts/get", "greet", `"name":"greet","arguments":{"name":"cand-0042","style":"concise"},`}
	callComplete = call{"completion/complete", "", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"cand-01"},`}
	callList     = call{"resources/list", "", ""}
)

// newRequest builds the POST for c at url.
func newRequest(ctx context.Context, url string, c call, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", c.method)
	if c.name != "" {
		req.Header.Set("Mcp-Name", c.name)
	}
	return req
}

// newClient returns an HTTP client keeping up to conns connections alive
// to one loopback server.
func newClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// do sends one request and checks that it succeeded: HTTP 200 and a
// JSON-RPC result (as JSON or as one SSE event).
func do(ctx context.Context, cl *http.Client, url string, c call, body []byte, buf *bytes.Buffer) error {
	resp, err := cl.Do(newRequest(ctx, url, c, body))
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	buf.Reset()
	_, err = io.Copy(buf, resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %.200s", c.method, resp.StatusCode, buf.Bytes())
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"result":`)) || bytes.Contains(buf.Bytes(), []byte(`"error":{`)) {
		return fmt.Errorf("%s: not a result: %.200s", c.method, buf.Bytes())
	}
	return nil
}

// loadResult is one load run against one server.
type loadResult struct {
	rps      float64
	p50, p99 time.Duration
	n        int
	errs     int
	firstErr error
}

// load runs clients concurrent closed-loop clients sending c to url: warm
// first (discarded), then measured for dur. Each client has its own
// keep-alive connection.
func load(ctx context.Context, url string, calls []call, clients int, warm, dur time.Duration) loadResult {
	cl := newClient(clients)
	defer cl.CloseIdleConnections()
	bodies := make([][]byte, len(calls))
	for i, c := range calls {
		bodies[i] = c.body()
	}
	var phase atomic.Int32 // 0 warm, 1 measure, 2 stop
	lat := make([][]time.Duration, clients)
	errs := make([]int, clients)
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			mine := make([]time.Duration, 0, 4096)
			for i := g; ; i++ {
				ph := phase.Load()
				if ph == 2 || ctx.Err() != nil {
					break
				}
				k := i % len(calls)
				t0 := time.Now()
				err := do(ctx, cl, url, calls[k], bodies[k], &buf)
				d := time.Since(t0)
				if ph != 1 || phase.Load() != 1 {
					continue
				}
				if err != nil {
					errs[g]++
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				mine = append(mine, d)
			}
			lat[g] = mine
		}()
	}
	sleep(ctx, warm)
	phase.Store(1)
	t0 := time.Now()
	sleep(ctx, dur)
	phase.Store(2)
	elapsed := time.Since(t0)
	wg.Wait()
	var all []time.Duration
	r := loadResult{}
	for g := range clients {
		all = append(all, lat[g]...)
		r.errs += errs[g]
	}
	if e := firstErr.Load(); e != nil {
		r.firstErr = *e
	}
	r.n = len(all)
	r.rps = float64(len(all)) / elapsed.Seconds()
	slices.Sort(all)
	r.p50, r.p99 = percentile(all, 0.50), percentile(all, 0.99)
	return r
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// median returns the median of xs (the mean of the middle two when even).
func median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
