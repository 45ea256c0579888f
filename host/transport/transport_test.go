package transport

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		host    string
		allowed []string
		want    bool
	}{
		{"localhost:7337", DefaultAllowedHosts, true},
		{"LOCALHOST", DefaultAllowedHosts, true},
		{"127.0.0.1:1", DefaultAllowedHosts, true},
		{"[::1]:8080", DefaultAllowedHosts, true},
		{"evil.example", DefaultAllowedHosts, false},
		{"localhost.evil.example:80", DefaultAllowedHosts, false},
		{"", DefaultAllowedHosts, false},
		{"mcp.example:443", []string{"mcp.example:443"}, true},
		{"mcp.example:444", []string{"mcp.example:443"}, false},
		{"anything", []string{"*"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := hostAllowed(tt.host, tt.allowed); got != tt.want {
				t.Errorf("hostAllowed(%q, %v) = %v", tt.host, tt.allowed, got)
			}
		})
	}
	for origin, want := range map[string]bool{
		"http://localhost:3000": true, "https://127.0.0.1": true, "null": false,
		"file://localhost": false, "http://evil.example": false,
	} {
		if got := originAllowed(origin, DefaultAllowedHosts); got != want {
			t.Errorf("originAllowed(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestStdioCancel(t *testing.T) {
	srv := newTestServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), srv, inR, outW, StdioOptions{}) }()
	lines := scanLines(outR)

	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"block",` + meta + `}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + meta + `}}`)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	if got := lines.Text(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,`) {
		t.Errorf("first message is not the discover response: %s", got)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return on EOF")
	}
	outW.Close()
	for lines.Scan() {
		t.Errorf("unexpected output after cancel: %s", lines.Text())
	}
}

func TestStdioOversizedLine(t *testing.T) {
	in := strings.Repeat("x", 400) + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}` + "\n"
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), newTestServer(t), strings.NewReader(in), &out, StdioOptions{MaxMessageBytes: 250}); err != nil {
		t.Fatal(err)
	}
	var got []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		got = append(got, sc.Text()[:min(len(sc.Text()), 40)])
	}
	want := []string{`{"jsonrpc":"2.0","error":{"code":-32600,`, `{"jsonrpc":"2.0","id":1,"result":{"resul`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStdioContextCancel(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, newTestServer(t), inR, io.Discard, StdioOptions{}) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block",`+meta+`}}`+"\n")
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("ServeStdio = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after cancel")
	}
}

func newHTTP(t testing.TB, opts HTTPOptions) (*HTTPHandler, *httptest.Server) {
	h := NewHTTPHandler(newTestServer(t), opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return h, ts
}

func modernPost(t testing.TB, ctx context.Context, url, method, name, body string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(HeaderMethod, method)
	if name != "" {
		req.Header.Set(HeaderName, name)
	}
	return req
}

func TestHTTPBodyLimit(t *testing.T) {
	_, ts := newHTTP(t, HTTPOptions{MaxBodyBytes: 256})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 300) + `",` + meta + `}}`
	resp, err := ts.Client().Do(modernPost(t, context.Background(), ts.URL, "tools/list", "", body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"code":-32600`) {
		t.Errorf("got %d %s, want 413 with a JSON-RPC error", resp.StatusCode, b)
	}
}

func TestHTTPDisconnectCancels(t *testing.T) {
	_, ts := newHTTP(t, HTTPOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block",` + meta + `}}`
	_, err := ts.Client().Do(modernPost(t, ctx, ts.URL, "tools/call", "block", body))
	if err == nil {
		t.Fatal("a blocked call answered")
	}
	// The blocked provider call ends when the request context is
	// cancelled; if it did not, ts.Close in Cleanup would hang.
}

func TestHTTPLegacyStream(t *testing.T) {
	_, ts := newHTTP(t, HTTPOptions{KeepAlive: 10 * time.Millisecond})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, err := ts.Client().Post(ts.URL, "application/json", strings.NewReader(init))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	if sid == "" {
		t.Fatal("initialize minted no session")
	}
	get, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	get.Header.Set(HeaderSessionID, sid)
	get.Header.Set("Accept", "text/event-stream")
	stream, err := ts.Client().Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if ct := stream.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(stream.Body)
	var comments int
	for comments < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ":") {
			comments++
		}
	}
	del, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	del.Header.Set(HeaderSessionID, sid)
	dresp, err := ts.Client().Do(del)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE = %d", dresp.StatusCode)
	}
	// Ending the session ends its stream.
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Errorf("stream did not end cleanly: %v", err)
	}
}

func BenchmarkHTTPRead(b *testing.B) {
	_, ts := newHTTP(b, HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",` + meta + `}}`
	client := ts.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Do(modernPost(b, context.Background(), ts.URL, "resources/read", "test://static-text", body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

func BenchmarkStdioRead(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",` + meta + `}}` + "\n"
	in := strings.Repeat(line, b.N)
	srv := newTestServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	if err := ServeStdio(context.Background(), srv, strings.NewReader(in), io.Discard, StdioOptions{}); err != nil {
		b.Fatal(err)
	}
}
