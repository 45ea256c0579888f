package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
)

// listenFrame is subscriptions/listen number i.
func listenFrame(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":{"toolsListChanged":true}}}`, i, wsMeta)
}

// listenOutcome reads n messages and counts the listen acknowledgements
// and the -32600 refusals naming the per-connection bound.
func listenOutcome(t *testing.T, n int, next func() string) (acks, refused int) {
	t.Helper()
	for range n {
		msg := next()
		var m struct {
			Method string `json:"method"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(msg), &m); err != nil {
			t.Fatalf("unreadable message %q: %v", msg, err)
		}
		switch {
		case m.Method == "notifications/subscriptions/acknowledged":
			acks++
		case m.Error != nil && m.Error.Code == mcp.CodeInvalidRequest && strings.Contains(m.Error.Message, "listen streams per connection"):
			refused++
		default:
			t.Fatalf("unexpected message: %s", msg)
		}
	}
	return acks, refused
}

func hubServer(t testing.TB) (*mcp.Server, *notify.Hub) {
	t.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	t.Cleanup(hub.Close)
	return mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", Hub: hub}), hub
}

// TestListenBoundSameOnEveryConnection: stdio and WebSocket share one
// connection core, so both acknowledge mcp.MaxListens listen streams and
// refuse the rest with -32600, and the refused ones hold no goroutine
// (issue 13 item 7; WebSocket acknowledged every one).
func TestListenBoundSameOnEveryConnection(t *testing.T) {
	const excess = 200
	total := mcp.MaxListens + excess
	t.Run("stdio", func(t *testing.T) {
		srv, _ := hubServer(t)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- ServeStdio(context.Background(), srv, inR, outW, StdioOptions{}) }()
		go func() {
			for i := range total {
				if _, err := io.WriteString(inW, listenFrame(i)+"\n"); err != nil {
					return
				}
			}
		}()
		lines := scanLines(outR)
		acks, refused := listenOutcome(t, total, func() string {
			if !lines.Scan() {
				t.Fatal("stdio output ended")
			}
			return lines.Text()
		})
		if acks != mcp.MaxListens || refused != excess {
			t.Errorf("stdio: %d acknowledged, %d refused; want %d and %d", acks, refused, mcp.MaxListens, excess)
		}
		inW.Close()
		go func() {
			for lines.Scan() { // drain whatever the closing streams write
			}
		}()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		outW.Close()
	})
	t.Run("websocket", func(t *testing.T) {
		srv, _ := hubServer(t)
		h := NewWSHandler(srv, WSOptions{})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		before := runtime.NumGoroutine()
		c := dialWS(t, "ws"+strings.TrimPrefix(ts.URL, "http"))
		go func() {
			for i := range total {
				if c.WriteMessage(websocket.TextMessage, []byte(listenFrame(i))) != nil {
					return
				}
			}
		}()
		acks, refused := listenOutcome(t, total, func() string { return wsRead(t, c) })
		if acks != mcp.MaxListens || refused != excess {
			t.Errorf("websocket: %d acknowledged, %d refused; want %d and %d", acks, refused, mcp.MaxListens, excess)
		}
		// One goroutine per open stream, plus the connection's reader,
		// writer and the test's own; never one per frame sent.
		if n := runtime.NumGoroutine() - before; n > mcp.MaxListens+16 {
			t.Errorf("%d goroutines more than before the connection; want at most %d", n, mcp.MaxListens+16)
		}
	})
}

// TestHTTPListenBoundPerClient: on Streamable HTTP each listen stream is
// its own request, so the bound is per client (here principals with
// credentials): the excess answers 429 with -32600, and another principal
// still gets its streams.
func TestHTTPListenBoundPerClient(t *testing.T) {
	srv, _ := hubServer(t)
	h := NewHTTPHandler(srv, HTTPOptions{
		MaxListensPerClient: 2,
		PrincipalFunc: func(r *http.Request) (abi.Principal, error) {
			return abi.Principal{ID: r.Header.Get("X-Test-Principal")}, nil
		},
	})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(principal string, i int) *http.Response {
		t.Helper()
		req := modernPost(t, ctx, ts.URL, "subscriptions/listen", "", listenFrame(i))
		req.Header.Set("X-Test-Principal", principal)
		req.Header.Set("Authorization", "Bearer token-of-"+principal)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ack := func(resp *http.Response) {
		t.Helper()
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf) // the acknowledgement event
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(buf[:n]), "acknowledged") {
			t.Fatalf("listen: %d %s; want 200 and the acknowledgement", resp.StatusCode, buf[:n])
		}
	}
	a1, a2 := open("a", 1), open("a", 2)
	defer a1.Body.Close()
	defer a2.Body.Close()
	ack(a1)
	ack(a2)
	over := open("a", 3)
	body, _ := io.ReadAll(over.Body)
	over.Body.Close()
	if over.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"code":-32600`) ||
		!strings.Contains(string(body), "at most 2 listen streams per client") {
		t.Errorf("third stream of a: %d %s; want 429 -32600", over.StatusCode, body)
	}
	b1 := open("b", 4)
	defer b1.Body.Close()
	ack(b1)
	// A stream that ends gives its place back.
	a1.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := open("a", 5)
		if r.StatusCode == http.StatusOK {
			ack(r)
			r.Body.Close()
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a's closed stream never gave its place back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTransportImportsOnlyMCP: framing depends on the protocol layer and
// on nothing deeper (docs/architecture.md); whatever a transport needs of
// the catalog, host/mcp provides. Beside it only the HTTP sessions' own
// leaf packages: their tokens (host/session) and the key ring sealing
// them (host/keys).
func TestTransportImportsOnlyMCP(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"host/mcp", "host/session", "host/keys"}
	for _, imp := range pkg.Imports {
		rest, ok := strings.CutPrefix(imp, "github.com/corral-mcp/corral/")
		if ok && strings.HasPrefix(rest, "host/") && !slices.Contains(allowed, rest) {
			t.Errorf("host/transport imports %s; only %v are allowed", imp, allowed)
		}
	}
	session, err := build.ImportDir("../session", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range session.Imports {
		if rest, ok := strings.CutPrefix(imp, "github.com/corral-mcp/corral/"); ok && rest != "host/keys" {
			t.Errorf("host/session imports %s; it is a leaf above host/keys", imp)
		}
	}
}
