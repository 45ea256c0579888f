package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/mcp"
)

// Defaults for WSOptions.
const (
	DefaultWSMaxMessageBytes = 4 << 20
	DefaultWSSendQueue       = 256
	DefaultWSPingInterval    = 30 * time.Second
	DefaultWSWriteTimeout    = 10 * time.Second
)

// WebSocket close codes corral sends (RFC 6455 §7.4.1).
const (
	// CloseSlowConsumer: the connection's send queue overflowed because
	// the client does not read fast enough (1008, policy violation).
	CloseSlowConsumer = websocket.ClosePolicyViolation
	// CloseUnsupported: a binary frame arrived (1003).
	CloseUnsupported = websocket.CloseUnsupportedData
)

// WSOptions configure a WSHandler.
type WSOptions struct {
	// AllowedHosts and AllowedOrigins guard against DNS rebinding exactly
	// as for HTTP (see HTTPOptions); empty means DefaultAllowedHosts. The
	// check runs before the upgrade, so a refused browser gets 403.
	AllowedHosts   []string
	AllowedOrigins []string
	// MaxMessageBytes caps one incoming message (default 4 MiB); a larger
	// one closes the connection with 1009.
	MaxMessageBytes int64
	// SendQueue is the number of outgoing messages a connection may have
	// waiting (default 256). A client that leaves it full for WriteTimeout
	// is disconnected with CloseSlowConsumer. Each connection has its own
	// queue and writer, so a slow one never holds anyone else up.
	SendQueue int
	// PingInterval is how often the server pings (default 30s); a peer
	// silent for two intervals is disconnected.
	PingInterval time.Duration
	// WriteTimeout bounds one frame write, and how long a message may
	// wait for room in a full send queue (default 10s).
	WriteTimeout time.Duration
	// MaxConcurrent bounds the requests one connection has in flight
	// (default 16); the reader waits for a free slot.
	MaxConcurrent int
	// Principal and PrincipalFunc: as for HTTPOptions, resolved once per
	// connection at the upgrade.
	Principal     abi.Principal
	PrincipalFunc func(*http.Request) (abi.Principal, error)
	// ListenBound, when set, gives each connection the hooks that count
	// its listen streams against a bound shared with other connections
	// and transports (HTTPHandler.ListenBound: the client's own), beside
	// mcp.MaxListens per connection.
	ListenBound func(r *http.Request, p abi.Principal) (open func() *mcp.Error, close func())
	// RequestBound, when set, does the same for the requests a connection
	// has in progress (HTTPHandler.RequestBound), beside MaxConcurrent per
	// connection.
	RequestBound func(r *http.Request, p abi.Principal) (open func() *mcp.Error, close func())
	// Logger receives transport events; nil discards.
	Logger *slog.Logger
}

// WSHandler serves MCP over WebSocket (mount it at /ws): one JSON-RPC
// message per text frame, in both directions (docs/websocket.md). A
// connection follows the rules of [mcp.Conn], as a stdio process does: an
// initialize on it starts a legacy session scoped to the connection,
// requests with per-request _meta are served statelessly, and the same
// limits apply (MaxConcurrent, mcp.MaxListens). This transport only frames
// messages, queues them per connection and pings.
type WSHandler struct {
	srv  *mcp.Server
	opts WSOptions
	log  *slog.Logger
	up   websocket.Upgrader

	mu     sync.Mutex
	conns  map[*wsConn]struct{}
	closed bool

	slow atomic.Int64 // connections closed as slow consumers
}

// SlowDisconnects returns how many connections were closed because their
// client read too slowly (CloseSlowConsumer).
func (h *WSHandler) SlowDisconnects() int64 { return h.slow.Load() }

// NewWSHandler returns a handler serving srv.
func NewWSHandler(srv *mcp.Server, opts WSOptions) *WSHandler {
	if len(opts.AllowedHosts) == 0 {
		opts.AllowedHosts = DefaultAllowedHosts
	}
	if len(opts.AllowedOrigins) == 0 {
		opts.AllowedOrigins = DefaultAllowedHosts
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultWSMaxMessageBytes
	}
	if opts.SendQueue <= 0 {
		opts.SendQueue = DefaultWSSendQueue
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultWSPingInterval
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWSWriteTimeout
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	h := &WSHandler{srv: srv, opts: opts, log: orDiscard(opts.Logger), conns: map[*wsConn]struct{}{}}
	h.up = websocket.Upgrader{
		ReadBufferSize:  16 << 10,
		WriteBufferSize: 16 << 10,
		// Host and Origin were checked before the upgrade with the HTTP
		// policy; gorilla's same-origin default would refuse legitimate
		// non-browser clients and does not look at Host at all.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	return h
}

// ServeHTTP implements http.Handler: it checks Host and Origin, resolves
// the principal and upgrades the connection.
func (h *WSHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hostAllowed(r.Host, h.opts.AllowedHosts) {
		h.log.Warn("transport: ws refused Host", "host", r.Host)
		http.Error(w, "Forbidden: Host not allowed.", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, h.opts.AllowedOrigins) {
		h.log.Warn("transport: ws refused Origin", "origin", origin)
		http.Error(w, "Forbidden: Origin not allowed.", http.StatusForbidden)
		return
	}
	p := h.opts.Principal
	if h.opts.PrincipalFunc != nil {
		var err error
		if p, err = h.opts.PrincipalFunc(r); err != nil {
			http.Error(w, "Unauthorized.", http.StatusUnauthorized)
			return
		}
	}
	ws, err := h.up.Upgrade(w, r, nil)
	if err != nil {
		h.log.Debug("transport: ws upgrade", "err", err) // Upgrade answered already
		return
	}
	opts := mcp.ConnOptions{Principal: p, MaxConcurrent: h.opts.MaxConcurrent}
	if h.opts.ListenBound != nil {
		opts.OpenListen, opts.CloseListen = h.opts.ListenBound(r, p)
	}
	if h.opts.RequestBound != nil {
		opts.OpenRequest, opts.CloseRequest = h.opts.RequestBound(r, p)
	}
	c := h.newConn(ws, opts)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		c.kill(websocket.CloseGoingAway, "server shutting down")
		return
	}
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	c.run()
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

// Close disconnects every connection (1001, going away); later upgrades
// are refused the same way.
func (h *WSHandler) Close() {
	h.mu.Lock()
	h.closed = true
	conns := make([]*wsConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.kill(websocket.CloseGoingAway, "server shutting down")
	}
}

// Conns returns the number of open connections.
func (h *WSHandler) Conns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// wsConn is one WebSocket connection: its framing, send queue and
// writer around the connection core.
type wsConn struct {
	h    *WSHandler
	ws   *websocket.Conn
	conn *mcp.Conn

	ctx    context.Context // the connection's; cancelled by kill
	cancel context.CancelFunc
	send   chan []byte
	gone   chan struct{} // closed by kill
	killMu sync.Once
}

func (h *WSHandler) newConn(ws *websocket.Conn, opts mcp.ConnOptions) *wsConn {
	c := &wsConn{h: h, ws: ws, send: make(chan []byte, h.opts.SendQueue), gone: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	opts.Send = c.enqueue
	c.conn = h.srv.NewConn(opts)
	return c
}

var errConnGone = errors.New("transport: websocket connection closed")

// enqueue queues msg for the writer. Only the connection's own goroutines
// call it (the hub never does), so waiting here delays nobody else; when
// the queue stays full for WriteTimeout the client is too slow, and the
// connection is closed with CloseSlowConsumer.
func (c *wsConn) enqueue(msg []byte) error {
	select {
	case <-c.gone:
		return errConnGone
	case c.send <- msg:
		return nil
	default:
	}
	t := time.NewTimer(c.h.opts.WriteTimeout)
	defer t.Stop()
	select {
	case <-c.gone:
		return errConnGone
	case c.send <- msg:
		return nil
	case <-t.C:
		c.h.log.Warn("transport: ws client too slow; disconnecting", "queue", cap(c.send))
		c.h.slow.Add(1)
		c.kill(CloseSlowConsumer, "send queue full: client too slow")
		return errConnGone
	}
}

// kill stops the writer, sends a close frame and closes the socket. The
// close frame waits (up to WriteTimeout) for a frame write in progress, so
// a slow client that reads again soon still learns why it was cut off.
func (c *wsConn) kill(code int, reason string) {
	c.killMu.Do(func() {
		close(c.gone)
		c.cancel() // the requests in flight are for nobody now
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(c.h.opts.WriteTimeout))
		_ = c.ws.Close()
	})
}

// run serves the connection until it closes.
func (c *wsConn) run() {
	defer func() {
		c.cancel()
		c.conn.Close()
	}()
	go c.writeLoop()
	c.ws.SetReadLimit(c.h.opts.MaxMessageBytes)
	wait := 2 * c.h.opts.PingInterval
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(wait)) })
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				c.kill(websocket.CloseMessageTooBig, fmt.Sprintf("message larger than %d bytes", c.h.opts.MaxMessageBytes))
			case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway):
				c.kill(websocket.CloseNormalClosure, "")
			default:
				c.h.log.Debug("transport: ws read", "err", err)
				c.kill(websocket.CloseAbnormalClosure, "")
			}
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(wait))
		if typ != websocket.TextMessage {
			c.kill(CloseUnsupported, "send JSON-RPC messages as text frames")
			return
		}
		c.conn.Handle(c.ctx, data)
	}
}

// writeLoop writes queued messages, one per text frame, and pings.
func (c *wsConn) writeLoop() {
	t := time.NewTicker(c.h.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.gone:
			return
		case msg := <-c.send:
			// The queue's own timeout decides when a client is too slow
			// (and the close frame must be able to follow this write), so
			// a frame may take long; a dead peer is caught by the missing
			// pongs within two ping intervals.
			_ = c.ws.SetWriteDeadline(time.Now().Add(2 * c.h.opts.PingInterval))
			err := c.ws.WriteMessage(websocket.TextMessage, msg)
			mcp.Recycle(msg) // written: the frame writer keeps no reference
			if err != nil {
				c.h.log.Debug("transport: ws write", "err", err)
				c.kill(websocket.CloseAbnormalClosure, "")
				return
			}
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.h.opts.WriteTimeout)); err != nil {
				c.kill(websocket.CloseAbnormalClosure, "")
				return
			}
		}
	}
}
