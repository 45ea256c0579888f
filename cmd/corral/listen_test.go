package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/corral-mcp/corral/host/mcp"
)

// listenFrames is how many subscriptions/listen requests the tests below
// send on one connection: far more than mcp.MaxListens.
const listenFrames = 2000

func listenLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":{"toolsListChanged":true}}}`, i, modernMeta)
}

// countListens reads listenFrames messages with next and counts the
// acknowledgements and the -32600 refusals naming the bound.
func countListens(t *testing.T, next func() (string, error)) (acks, refused int) {
	t.Helper()
	for range listenFrames {
		msg, err := next()
		if err != nil {
			t.Fatalf("after %d acknowledged and %d refused: %v", acks, refused, err)
		}
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
		case m.Error != nil && m.Error.Code == -32600 && strings.Contains(m.Error.Message, fmt.Sprintf("at most %d listen streams per connection", mcp.MaxListens)):
			refused++
		default:
			t.Fatalf("unexpected message: %s", msg)
		}
	}
	return acks, refused
}

var goroutinesLine = regexp.MustCompile(`(?m)^go_goroutines ([0-9.e+]+)$`)

// goroutines reads go_goroutines from the admin listener's /metrics.
func (s *wireServer) goroutines(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := goroutinesLine.FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no go_goroutines")
	}
	f, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return int(f)
}

// TestWSListenBound: 2,000 listen requests on one WebSocket connection to
// bin/corral get mcp.MaxListens acknowledgements and a clear -32600 for
// the rest, and the server's goroutines grow with the open streams, not
// with the frames sent (issue 13 item 7: every one was acknowledged and
// held a goroutine).
func TestWSListenBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startWire(t, wireAuth(), "conformance")
	before := s.goroutines(t)
	hdr := http.Header{"Authorization": {"Bearer " + wireTokens["alice"]}}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.base, "http")+"/ws", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		for i := range listenFrames {
			if c.WriteMessage(websocket.TextMessage, []byte(listenLine(i))) != nil {
				return
			}
		}
	}()
	acks, refused := countListens(t, func() (string, error) {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		return string(b), err
	})
	if acks != mcp.MaxListens || refused != listenFrames-mcp.MaxListens {
		t.Errorf("%d acknowledged, %d refused; want %d and %d", acks, refused, mcp.MaxListens, listenFrames-mcp.MaxListens)
	}
	// Each open stream holds one goroutine; allow the connection's own
	// and some slack, far below one per frame.
	if grew := s.goroutines(t) - before; grew > 2*mcp.MaxListens+32 {
		t.Errorf("goroutines grew by %d with %d streams open; want at most %d", grew, acks, 2*mcp.MaxListens+32)
	}
}

// TestStdioListenBound: the same 2,000 listen requests on bin/corral's
// stdin get the same answers as on WebSocket.
func TestStdioListenBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startStdio(t, nil, "--plugins", pluginDir(t), "--log-level", "warn")
	go func() {
		w := bufio.NewWriter(s.stdin)
		for i := range listenFrames {
			if _, err := w.WriteString(listenLine(i) + "\n"); err != nil {
				return
			}
		}
		_ = w.Flush()
	}()
	acks, refused := countListens(t, s.next)
	if acks != mcp.MaxListens || refused != listenFrames-mcp.MaxListens {
		t.Errorf("%d acknowledged, %d refused; want %d and %d", acks, refused, mcp.MaxListens, listenFrames-mcp.MaxListens)
	}
}

// TestWSListenBoundPerClient: a client's listen streams on all its
// WebSocket connections and over Streamable HTTP count against one bound,
// http.maxListensPerClient (before, each new WebSocket connection brought
// another mcp.MaxListens, whatever the HTTP bound); another principal's
// streams are not counted with them, and a closed connection's streams
// are given back.
func TestWSListenBoundPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const bound = 3
	s := startWireEnv(t, []string{"CORRAL_HTTP_MAX_LISTENS_PER_CLIENT=" + strconv.Itoa(bound)}, wireAuth(), "conformance")
	dial := func(principal string) *websocket.Conn {
		t.Helper()
		hdr := http.Header{"Authorization": {"Bearer " + wireTokens[principal]}}
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.base, "http")+"/ws", hdr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	refusal := fmt.Sprintf("at most %d listen streams per client", bound)
	id := 0
	// listen sends one listen on c and says whether it was acknowledged.
	listen := func(c *websocket.Conn) bool {
		t.Helper()
		id++
		if err := c.WriteMessage(websocket.TextMessage, []byte(listenLine(id))); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		switch msg := string(b); {
		case strings.Contains(msg, `"notifications/subscriptions/acknowledged"`):
			return true
		case strings.Contains(msg, `"code":-32600`) && strings.Contains(msg, refusal):
			return false
		default:
			t.Fatalf("unexpected answer to a listen: %s", msg)
			return false
		}
	}
	first, second := dial("alice"), dial("alice")
	for i := range 2 {
		if !listen(first) {
			t.Fatalf("alice's listen %d was refused", i+1)
		}
	}
	if !listen(second) {
		t.Fatalf("alice's listen %d of %d was refused", bound, bound)
	}
	if listen(second) {
		t.Fatalf("alice's listen %d on a second connection was acknowledged; want %q", bound+1, refusal)
	}
	resp := s.post(t, "alice", `{"jsonrpc":"2.0","id":99,"method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"toolsListChanged":true}}}`, modernHeaders("subscriptions/listen", ""))
	if a := answerOf(t, resp); a.Status != http.StatusTooManyRequests || !strings.Contains(a.Body, refusal) {
		t.Errorf("alice's listen over HTTP: %d %s; want 429 with %q", a.Status, a.Body, refusal)
	}
	bob := dial("bob")
	for i := range bound {
		if !listen(bob) {
			t.Fatalf("bob's listen %d was refused: alice's streams counted against him", i+1)
		}
	}
	// Closing the first connection gives its two streams back.
	first.Close()
	given := false
	for range 100 {
		if given = listen(second); given {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !given {
		t.Error("alice's streams on a closed connection were never given back")
	}
}

// TestWSRequestsBoundPerClient: a client's requests in progress on all
// its WebSocket connections and over Streamable HTTP count against one
// bound, http.maxConcurrentPerPrincipal (before, each new WebSocket
// connection brought another 16): two elicitations left unanswered on
// one connection hold alice's two, so her request on a second connection
// is answered -31429 and her POST 429; bob is not counted with her, and
// a closed connection gives its requests back.
func TestWSRequestsBoundPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const bound = 2
	s := startWireEnv(t, []string{"CORRAL_HTTP_MAX_CONCURRENT_PER_PRINCIPAL=" + strconv.Itoa(bound)}, wireAuth(), "conformance")
	read := func(c *websocket.Conn) string {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(c *websocket.Conn, msg string) {
		t.Helper()
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// open dials /ws as principal and opens a 2025-11-25 session that
	// can answer elicitations.
	open := func(principal string) *websocket.Conn {
		t.Helper()
		hdr := http.Header{"Authorization": {"Bearer " + wireTokens[principal]}}
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.base, "http")+"/ws", hdr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		write(c, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
		if msg := read(c); !strings.Contains(msg, `"protocolVersion"`) {
			t.Fatalf("initialize: %s", msg)
		}
		write(c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return c
	}
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{"message":"hi?"}}}`
	refusal := fmt.Sprintf("%d requests of this principal are in progress", bound)
	held := open("alice")
	for i := range bound {
		write(held, fmt.Sprintf(call, i+1, "test_elicitation"))
		if msg := read(held); !strings.Contains(msg, `"elicitation/create"`) {
			t.Fatalf("elicitation %d: %s", i+1, msg)
		}
	}
	second := open("alice")
	write(second, fmt.Sprintf(call, 10, "test_simple_text"))
	if msg := read(second); !strings.Contains(msg, `"code":-31429`) || !strings.Contains(msg, refusal) {
		t.Fatalf("alice's request on a second connection with %d held on the first: %s; want -31429 with %q", bound, msg, refusal)
	}
	resp := s.post(t, "alice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`, modernHeaders("tools/list", ""))
	if a := answerOf(t, resp); a.Status != http.StatusTooManyRequests || !strings.Contains(a.Body, refusal) {
		t.Errorf("alice's POST: %d %s; want 429 with %q", a.Status, a.Body, refusal)
	}
	bob := open("bob")
	write(bob, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if msg := read(bob); !strings.Contains(msg, `"result"`) {
		t.Errorf("bob's request while alice is at her bound: %s", msg)
	}
	held.Close()
	answered := false
	for i := range 100 {
		write(second, fmt.Sprintf(call, 20+i, "test_simple_text"))
		if msg := read(second); strings.Contains(msg, `"result"`) {
			answered = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !answered {
		t.Error("alice's requests on a closed connection were never given back")
	}
}
