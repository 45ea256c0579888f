package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
)

// bearerPrincipal stands in for auth's middleware: "Authorization: Bearer
// NAME" is the principal NAME, no header is anonymous.
func bearerPrincipal(r *http.Request) (abi.Principal, error) {
	if name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return abi.Principal{ID: name}, nil
	}
	return abi.Principal{ID: "anonymous"}, nil
}

// newStallServer serves the conformance provider (and listen streams)
// over a real loopback listener with a header deadline, as corral serve
// does.
func newStallServer(tb testing.TB, opts HTTPOptions) (*HTTPHandler, string) {
	tb.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	opts.PrincipalFunc = bearerPrincipal
	h := NewHTTPHandler(mcp.NewServer(catalog.New(set), mcp.Options{Version: "stall", Hub: hub}), opts)
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ReadHeaderTimeout = 10 * time.Second
	ts.Start()
	tb.Cleanup(func() { hub.Close(); h.Close(); ts.Close() })
	return h, strings.TrimPrefix(ts.URL, "http://")
}

// stall opens a connection to addr and sends a POST that announces a
// 4 MiB body and sends 5 bytes of it.
func stall(tb testing.TB, addr string, headers ...string) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4194304\r\n"
	for _, h := range headers {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n{\"jso"); err != nil {
		tb.Fatal(err)
	}
	return c
}

// inflightCount is the number of requests the client named k (its
// String) has in progress.
func (h *HTTPHandler) inflightCount(k string) int {
	h.inflight.mu.Lock()
	defer h.inflight.mu.Unlock()
	for c, n := range h.inflight.n {
		if c.String() == k {
			return n
		}
	}
	return 0
}

// waitInflight waits (up to 20s, however loaded the machine) until k has
// n requests in progress.
func waitInflight(tb testing.TB, h *HTTPHandler, k string, n int) {
	tb.Helper()
	for deadline := time.Now().Add(20 * time.Second); h.inflightCount(k) != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: %d requests in progress, want %d", k, h.inflightCount(k), n)
		}
	}
}

const loopbackKey = "address:127.0.0.1/32"

// TestStalledUploadsBounded is the attack of issue 13 item 3: 96
// connections announce 4 MiB bodies and send 5 bytes. The heap grows by
// what was sent, not by what was announced (before: about 384 MiB), and
// every connection gets 408 and is closed once the body deadline passes.
func TestStalledUploadsBounded(t *testing.T) {
	const conns = 96
	const timeout = 3 * time.Second
	h, addr := newStallServer(t, HTTPOptions{ReadBodyTimeout: timeout, MaxConcurrentPerAddress: conns})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	cs := make([]net.Conn, conns)
	for i := range cs {
		cs[i] = stall(t, addr)
		defer cs[i].Close()
	}
	waitInflight(t, h, loopbackKey, conns)
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	const bound = 32 << 20
	if grew := int64(during.HeapAlloc) - int64(before.HeapAlloc); grew > bound {
		t.Errorf("heap grew by %d MiB under %d stalled 4 MiB uploads, want under %d MiB", grew>>20, conns, bound>>20)
	}

	for i, c := range cs {
		_ = c.SetReadDeadline(time.Now().Add(timeout + 20*time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("conn %d: no answer after the body deadline: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":-32600`) {
			t.Errorf("conn %d: %d %s, want 408 with a JSON-RPC error", i, resp.StatusCode, body)
		}
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("conn %d: still open after its 408 (read: %v)", i, err)
		}
	}
	waitInflight(t, h, loopbackKey, 0)
	if st := h.AdmissionStats(); st != (AdmissionStats{BodyTimeout: conns}) {
		t.Errorf("AdmissionStats = %+v, want %d body timeouts", st, conns)
	}
}

// toolsList is a modern request any principal may send, with its headers.
var (
	toolsList        = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	toolsListHeaders = []string{HeaderProtocolVersion + ": 2026-07-28", HeaderMethod + ": tools/list"}
)

// answer sends one request on a new connection and returns its answer.
func answer(t *testing.T, addr, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestConcurrentRequestsBounded: a principal with credentials, and a
// client address without, have at most their bound of requests in
// progress; the next gets 429 before its body is read, nobody else is
// affected, and a client cannot pick its address to escape the bound.
func TestConcurrentRequestsBounded(t *testing.T) {
	h, addr := newStallServer(t, HTTPOptions{
		MaxConcurrentPerPrincipal: 2, MaxConcurrentPerAddress: 2,
		Proxies: TrustedProxies{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
	})
	refused := func(what string, headers ...string) {
		t.Helper()
		resp, body := answer(t, addr, toolsList, headers...)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
			!strings.Contains(body, `"code":-31429`) {
			t.Errorf("%s: %d %v %s; want 429, Retry-After and -31429", what, resp.StatusCode, resp.Header, body)
		}
	}
	served := func(what string, headers ...string) {
		t.Helper()
		if resp, body := answer(t, addr, toolsList, append(headers, toolsListHeaders...)...); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s; want 200", what, resp.StatusCode, body)
		}
	}

	mallory := []net.Conn{stall(t, addr, "Authorization: Bearer mallory"), stall(t, addr, "Authorization: Bearer mallory")}
	waitInflight(t, h, "principal:mallory", 2)
	refused("mallory's third", "Authorization: Bearer mallory")
	served("alice, same address", "Authorization: Bearer alice")
	served("anonymous, same address", "X-Forwarded-For: 198.51.100.1")

	anon := []net.Conn{stall(t, addr, "X-Forwarded-For: 198.51.100.1"), stall(t, addr, "X-Forwarded-For: 198.51.100.1")}
	waitInflight(t, h, "address:198.51.100.1/32", 2)
	refused("anonymous third from 198.51.100.1", "X-Forwarded-For: 198.51.100.1")
	refused("anonymous third, another address written before its own", "X-Forwarded-For: 203.0.113.9, 198.51.100.1")
	served("anonymous from 198.51.100.2", "X-Forwarded-For: 198.51.100.2")
	served("alice", "Authorization: Bearer alice")

	for _, c := range append(mallory, anon...) {
		c.Close()
	}
	waitInflight(t, h, "principal:mallory", 0)
	waitInflight(t, h, "address:198.51.100.1/32", 0)
	served("mallory, once its uploads are gone", "Authorization: Bearer mallory")
	served("198.51.100.1, once its uploads are gone", "X-Forwarded-For: 198.51.100.1")
	if st := h.AdmissionStats(); st.Concurrency != 3 {
		t.Errorf("AdmissionStats = %+v, want 3 refused for concurrency", st)
	}
}

// TestListenStreamLeavesRequestBound: an open listen stream is bounded as
// a stream, not as a request in progress, so it does not use up its
// principal's concurrent requests.
func TestListenStreamLeavesRequestBound(t *testing.T) {
	h, addr := newStallServer(t, HTTPOptions{MaxConcurrentPerPrincipal: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := modernPost(t, ctx, "http://"+addr+"/mcp", "subscriptions/listen", "", listenBody("test://static-text"))
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", resp.StatusCode)
	}
	waitInflight(t, h, "principal:alice", 0)
	if resp, body := answer(t, addr, toolsList, append(toolsListHeaders, "Authorization: Bearer alice")...); resp.StatusCode != http.StatusOK {
		t.Errorf("alice's tools/list with a listen stream open: %d %s", resp.StatusCode, body)
	}
}

// BenchmarkStalledUploads measures a normal client's latency (alice, one
// keep-alive connection, tools/list) alone and while another principal
// holds 96 connections that announce 4 MiB bodies and send 5 bytes,
// reconnecting 100 ms after each is answered (refused at its bound of 64,
// or timed out at the 1s body deadline). The two phases alternate over 5
// rounds, so that a change in the machine's load falls on both. It
// reports both p99s and their ratio (issue 13 item 3: within 2×). A
// tighter reconnect loop is a connection-rate flood, which the bounds
// here do not address.
func BenchmarkStalledUploads(b *testing.B) {
	const bound = 64
	h, addr := newStallServer(b, HTTPOptions{ReadBodyTimeout: time.Second, MaxConcurrentPerPrincipal: bound})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	call := func() time.Duration {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(toolsList))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set(HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(HeaderMethod, "tools/list")
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("alice: %d", resp.StatusCode)
		}
		return time.Since(t0)
	}
	const attackers = 96
	attack := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		for range attackers {
			go func() {
				defer func() { done <- struct{}{} }()
				for ctx.Err() == nil {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						return
					}
					unblock := context.AfterFunc(ctx, func() { c.Close() })
					_, err = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer mallory\r\n"+
						"Content-Type: application/json\r\nContent-Length: 4194304\r\n\r\n{\"jso")
					if err == nil {
						_, _ = io.Copy(io.Discard, c) // until the server answers and closes
					}
					unblock()
					c.Close()
					select {
					case <-ctx.Done():
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
		}
		waitInflight(b, h, "principal:mallory", bound)
		return func() {
			cancel()
			for range attackers {
				<-done
			}
			waitInflight(b, h, "principal:mallory", 0)
		}
	}

	const rounds = 5
	var base, attacked []time.Duration
	b.ResetTimer()
	for r := range rounds {
		n := b.N / rounds
		if r < b.N%rounds {
			n++
		}
		for range n {
			base = append(base, call())
		}
		stop := attack()
		for range n {
			attacked = append(attacked, call())
		}
		stop()
	}
	b.StopTimer()
	_, p99base := percentiles(base)
	_, p99attack := percentiles(attacked)
	b.ReportMetric(float64(p99base.Microseconds()), "p99-base-µs")
	b.ReportMetric(float64(p99attack.Microseconds()), "p99-attack-µs")
	b.ReportMetric(float64(p99attack)/float64(p99base), "p99-ratio")
}
