package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
)

const wsMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// smallBufListener shrinks every accepted connection's send buffer, so a
// client that stops reading makes the server's queue fill quickly.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

func newWS(t testing.TB, opts WSOptions) (*WSHandler, *notify.Hub, string) {
	t.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	srv := mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", Hub: hub})
	h := NewWSHandler(srv, opts)
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = smallBufListener{ts.Listener}
	ts.Start()
	t.Cleanup(func() { h.Close(); hub.Close(); ts.Close() })
	return h, hub, "ws" + strings.TrimPrefix(ts.URL, "http")
}

func dialWS(t testing.TB, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wsSend(t testing.TB, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func wsRead(t testing.TB, c *websocket.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.TextMessage {
		t.Fatalf("frame type %d, want text", typ)
	}
	return string(b)
}

func TestWSBothEras(t *testing.T) {
	_, hub, url := newWS(t, WSOptions{})
	c := dialWS(t, url)

	// Modern: stateless request, then a listen stream on the same socket.
	wsSend(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+wsMeta+`}}`)
	if got := wsRead(t, c); !strings.Contains(got, `"id":1,"result":{"resultType":"complete","tools":[`) {
		t.Errorf("tools/list: %s", got)
	}
	wsSend(t, c, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+wsMeta+`,"notifications":{"resourceSubscriptions":["test://watched-resource"]}}}`)
	if got := wsRead(t, c); !strings.Contains(got, `notifications/subscriptions/acknowledged`) {
		t.Fatalf("ack: %s", got)
	}
	hub.Publish(notify.ResourceUpdated, "test://watched-resource")
	want := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"uri":"test://watched-resource"}}`
	if got := wsRead(t, c); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
	// Cancelling the listen ends it without a response.
	wsSend(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)

	// Legacy: initialize starts a session scoped to the connection.
	wsSend(t, c, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := wsRead(t, c); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", got)
	}
	wsSend(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	wsSend(t, c, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://static-text"}}`)
	if got := wsRead(t, c); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("subscribe: %s", got)
	}
	hub.Publish(notify.ResourceUpdated, "test://watched-resource") // the listen is gone
	hub.Publish(notify.ResourceUpdated, "test://static-text")
	if got := wsRead(t, c); got != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static-text"}}` {
		t.Errorf("legacy update: %s", got)
	}
	hub.Publish(notify.PromptsListChanged, "")
	if got := wsRead(t, c); got != `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}` {
		t.Errorf("legacy list_changed: %s", got)
	}
}

func TestWSRefusals(t *testing.T) {
	_, _, url := newWS(t, WSOptions{MaxMessageBytes: 1024})
	tests := []struct {
		name   string
		header http.Header
		status int
	}{
		{"foreign origin", http.Header{"Origin": {"http://evil.example.com"}}, http.StatusForbidden},
		{"rebound host", http.Header{"Host": {"evil.example.com"}}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := websocket.Dialer{}
			u := url
			if h := tt.header.Get("Host"); h != "" {
				// Dial the loopback address but claim another host.
				d.NetDialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(url, "ws://"))
				}
				u = "ws://" + h
				tt.header = nil
			}
			_, resp, err := d.Dial(u, tt.header)
			if err == nil || resp == nil || resp.StatusCode != tt.status {
				t.Errorf("dial: err %v, resp %v; want status %d", err, resp, tt.status)
			}
		})
	}
	t.Run("message too big", func(t *testing.T) {
		c := dialWS(t, url)
		wsSend(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("a", 2000)+`"}}`)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
			t.Errorf("err %v, want close 1009", err)
		}
	})
	t.Run("binary frame", func(t *testing.T) {
		c := dialWS(t, url)
		if err := c.WriteMessage(websocket.BinaryMessage, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, CloseUnsupported) {
			t.Errorf("err %v, want close 1003", err)
		}
	})
}

// TestWSSlowConsumer: a client that stops reading is disconnected with
// CloseSlowConsumer, while a reading client on the same hub keeps getting
// every update.
func TestWSSlowConsumer(t *testing.T) {
	h, hub, url := newWS(t, WSOptions{SendQueue: 4, WriteTimeout: 200 * time.Millisecond})
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + wsMeta + `,"notifications":{"resourceSubscriptions":["test://big"]}}}`
	slow, fast := dialWS(t, url), dialWS(t, url)
	for _, c := range []*websocket.Conn{slow, fast} {
		wsSend(t, c, listen)
		if got := wsRead(t, c); !strings.Contains(got, "acknowledged") {
			t.Fatalf("ack: %s", got)
		}
	}
	pad := strings.Repeat("p", 2000)
	deadline := time.Now().Add(20 * time.Second)
	for round := 0; h.SlowDisconnects() == 0; round++ {
		if time.Now().After(deadline) {
			t.Fatalf("the slow client is still connected after %d rounds", round)
		}
		// The fast client reads each notification as it is published, so
		// its queue never holds more than one, however the writers are
		// scheduled; the slow client's fills once its socket buffers do.
		for i := range 200 {
			hub.Publish(notify.ResourceUpdated, fmt.Sprintf("test://big/%d/%d/%s", round, i, pad))
			if got := wsRead(t, fast); !strings.Contains(got, "test://big/") {
				t.Fatalf("fast client got %s", got)
			}
		}
	}
	// The slow client finds a close frame with the slow-consumer code
	// after whatever was buffered.
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := slow.ReadMessage()
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, CloseSlowConsumer) {
			t.Errorf("slow client: %v, want close %d", err, CloseSlowConsumer)
		}
		break
	}
}
