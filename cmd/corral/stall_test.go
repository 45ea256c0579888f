package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// heapInuse reads go_memstats_heap_inuse_bytes from the admin listener.
func (s *wireServer) heapInuse(t *testing.T) int64 {
	t.Helper()
	resp, err := http.Get(s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int64(f)
		}
	}
	t.Fatal("no go_memstats_heap_inuse_bytes in /metrics")
	return 0
}

// TestStalledUploadsOnTheWire: bin/corral under the attack of issue 13
// item 3. 97 connections of one principal announce 4 MiB bodies and send
// 5 bytes, one more than http.maxConcurrentPerPrincipal: exactly one is
// refused with 429 before its body is read, the heap stays within a bound
// while the other 96 are read (before: it grew by 384 MiB), another
// principal is still served, and every stalled connection gets 408 and is
// closed once http.readBodyTimeout passes.
func TestStalledUploadsOnTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const conns = 96
	t.Setenv("CORRAL_HTTP_READ_BODY_TIMEOUT", "4s")
	t.Setenv("CORRAL_HTTP_MAX_CONCURRENT_PER_PRINCIPAL", strconv.Itoa(conns))
	s := startWire(t, wireAuth(), "issues")
	addr := strings.TrimPrefix(s.base, "http://")
	before := s.heapInuse(t)

	cs := make([]net.Conn, conns+1)
	rs := make([]*bufio.Reader, conns+1)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"jso",
			addr, wireTokens["alice"], 4<<20)
		if err != nil {
			t.Fatal(err)
		}
		cs[i], rs[i] = c, bufio.NewReader(c)
	}
	// The one refused is answered once the other 96 are being read.
	refused := -1
	for deadline := time.Now().Add(20 * time.Second); refused < 0; {
		for i, c := range cs {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			if _, err := rs[i].Peek(1); err == nil {
				refused = i
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("none of %d uploads of one principal refused within 20s (bound %d)", conns+1, conns)
		}
	}
	const bound = 64 << 20
	if grew := s.heapInuse(t) - before; grew > bound {
		t.Errorf("heap in use grew by %d MiB under %d stalled 4 MiB uploads, want under %d MiB", grew>>20, conns, bound>>20)
	}
	if a := answerOf(t, s.post(t, "bob", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)); a.Status == http.StatusTooManyRequests {
		t.Errorf("bob refused because of alice's uploads: %s", a.Body)
	}

	for i, c := range cs {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(rs[i], nil)
		if err != nil {
			t.Fatalf("conn %d: no answer after http.readBodyTimeout: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case i == refused:
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":-31429`) {
				t.Errorf("conn %d, over the bound: %d %v %s; want 429, Retry-After: 1, -31429", i, resp.StatusCode, resp.Header, body)
			}
		case resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":-32600`):
			t.Errorf("conn %d: %d %s, want 408 with a JSON-RPC error", i, resp.StatusCode, body)
		}
		if _, err := rs[i].ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("conn %d: still open after its answer (read: %v)", i, err)
		}
	}
	m := request(t, http.MethodGet, s.admin+"/metrics", "", "", nil)
	for _, want := range []string{
		`corral_http_requests_refused_total{reason="concurrency"} 1`,
		fmt.Sprintf(`corral_http_requests_refused_total{reason="body_timeout"} %d`, conns),
	} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
