package mcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/notify"
)

// Limits of one connection, the same on every transport that has
// connections (stdio, WebSocket).
const (
	// DefaultMaxConcurrent is the default bound on the requests one
	// connection has in flight (ConnOptions.MaxConcurrent).
	DefaultMaxConcurrent = 16
	// MaxListens caps the subscriptions/listen streams one connection has
	// open; the excess is refused with -32600. An open listen stream does
	// not count against MaxConcurrent. Streamable HTTP, where every stream
	// is a request of its own, bounds listen streams per client.
	MaxListens = 64
)

// ConnOptions configure a Conn.
type ConnOptions struct {
	// Principal is who the connection serves; zero means anonymous.
	Principal abi.Principal
	// MaxConcurrent bounds the requests in flight (default
	// DefaultMaxConcurrent); Handle waits for a free slot.
	MaxConcurrent int
	// Send writes one message to the client. It is called from several
	// goroutines at once and must write each message whole. msg is the
	// transport's from then on: the Conn never touches it again, so a
	// transport that has written it may hand it back with Recycle. An
	// error says the client is gone; the request sending it stops.
	Send func(msg []byte) error
	// OpenListen, when set, is asked before each listen stream opens,
	// after MaxListens: a bound the connection shares with others (its
	// client's listen streams on every transport). An error refuses the
	// listen with it; CloseListen is called once per stream it let open,
	// when the stream ends.
	OpenListen  func() *Error
	CloseListen func()
	// OpenRequest, when set, is asked before each request served
	// concurrently (every one but initialize and notifications) runs: a
	// bound shared with other connections (its client's requests in
	// progress on every transport). An error answers the request with it;
	// CloseRequest is called once per request it let run, when it ends
	// (a listen stream, once its acknowledgement is out).
	OpenRequest  func() *Error
	CloseRequest func()
}

// Conn is the connection core every message-stream transport shares: the
// transport frames messages (a line on stdio, a text frame on WebSocket)
// and hands each one to Handle; the Conn applies the connection's rules.
//
//   - The connection is one legacy session: an initialize on it opens it.
//   - notifications/cancelled{requestId} cancels that request, which then
//     gets no response.
//   - Answers to server-to-client requests take no slot (the request
//     waiting for them may hold the last one).
//   - Every other message takes a slot of MaxConcurrent, so that with one
//     slot messages are answered in order; initialize takes them all, and
//     it and notifications are served in order, as they change the session
//     every later request relies on. Other requests run concurrently.
//   - A subscriptions/listen holds its slot only until its acknowledgement
//     is out; at most MaxListens are open at once, and fewer when
//     OpenListen says the connection's client is at its own bound.
//   - Once initialize gives the session a subscription, its notifications
//     (resource updates, unsolicited list_changed) are sent on the
//     connection with PumpSession.
//
// A Conn is safe for concurrent use.
type Conn struct {
	srv   *Server
	opts  ConnOptions
	sess  *Session
	slots chan struct{}
	done  chan struct{} // closed by Close

	// streams is the context of the long-lived streams (listen requests,
	// the session's notifications); Close cancels it.
	streams     context.Context
	stopStreams context.CancelFunc

	mu       sync.Mutex
	closing  bool
	inflight map[string]*call // raw request id -> the call serving it
	listens  int              // listen streams open or opening
	pumped   *notify.Subscription
	wg       sync.WaitGroup
}

// call is one request being served.
type call struct{ cancel context.CancelFunc }

// NewConn returns the core of a new connection to s.
func (s *Server) NewConn(opts ConnOptions) *Conn {
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	c := &Conn{
		srv:      s,
		opts:     opts,
		sess:     NewSession(""),
		slots:    make(chan struct{}, opts.MaxConcurrent),
		done:     make(chan struct{}),
		inflight: map[string]*call{},
	}
	c.streams, c.stopStreams = context.WithCancel(context.Background())
	return c
}

// errTooManyListens refuses a listen stream over MaxListens.
var errTooManyListens = &Error{Code: CodeInvalidRequest,
	Message: fmt.Sprintf("Invalid Request: at most %d listen streams per connection.", MaxListens)}

// Handle serves one message read from the connection; data is the Conn's
// from then on. The transport's reader calls it for each message in turn:
// it returns once the message is dispatched, waiting while MaxConcurrent
// requests are in flight. ctx is the connection's: cancelling it cancels
// the requests in flight and ends a wait for a slot. After Close, Handle
// does nothing.
func (c *Conn) Handle(ctx context.Context, data []byte) {
	if !c.begin() {
		return
	}
	defer c.wg.Done()
	m, derr := Decode(data)
	if derr == nil {
		if id := m.CancelledID(); id != nil {
			c.mu.Lock()
			if cl, ok := c.inflight[string(id)]; ok {
				cl.cancel()
			}
			c.mu.Unlock()
			return
		}
		if m.IsResponse {
			c.srv.Serve(ctx, c.request(), m)
			return
		}
	}
	n := 1
	listen := derr == nil && m.Method == "subscriptions/listen" && m.ID != nil
	switch {
	case derr == nil && m.Method == "initialize":
		n = c.opts.MaxConcurrent
	case listen:
		c.mu.Lock()
		full := c.listens >= MaxListens
		if !full {
			c.listens++
		}
		c.mu.Unlock()
		if full {
			_ = c.opts.Send(EncodeError(m.ID, errTooManyListens))
			return
		}
		if c.opts.OpenListen != nil {
			if err := c.opts.OpenListen(); err != nil {
				c.mu.Lock()
				c.listens--
				c.mu.Unlock()
				_ = c.opts.Send(EncodeError(m.ID, err))
				return
			}
		}
	}
	if !c.acquire(ctx, n) {
		c.endListen(listen)
		return
	}
	if derr != nil {
		if ShouldAnswer(m) {
			_ = c.opts.Send(EncodeError(IDOf(m), derr))
		}
		c.release(n)
		return
	}
	if m.IsNotification() || n > 1 {
		// In order: these change session state later requests rely on.
		if r := c.srv.Serve(ctx, c.request(), m); r.Msg != nil {
			_ = c.opts.Send(r.Msg)
		}
		c.pumpSession()
		c.release(n)
		return
	}
	c.serve(ctx, m, listen)
}

// begin counts a Handle in, unless the Conn is closing.
func (c *Conn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	return true
}

func (c *Conn) request() Request {
	return Request{Session: c.sess, Principal: c.opts.Principal}
}

// serve runs one request concurrently; it holds one slot, which a listen
// gives back once its acknowledgement is out.
func (c *Conn) serve(ctx context.Context, m *Message, listen bool) {
	parent := ctx
	if listen {
		parent = c.streams
	}
	if c.opts.OpenRequest != nil {
		if err := c.opts.OpenRequest(); err != nil {
			c.endListen(listen)
			c.release(1)
			_ = c.opts.Send(EncodeError(m.ID, err))
			return
		}
	}
	rctx, cancel := context.WithCancel(parent)
	var once sync.Once
	release := func() {
		once.Do(func() {
			c.release(1)
			if c.opts.CloseRequest != nil {
				c.opts.CloseRequest()
			}
		})
	}
	req := c.request()
	req.Notify = func(b []byte) error {
		if err := rctx.Err(); err != nil {
			return fmt.Errorf("mcp: request ended: %w", err)
		}
		err := c.opts.Send(b)
		if listen {
			release() // the acknowledgement is out: free the slot
		}
		return err
	}
	key, cl := string(m.ID), &call{cancel: cancel}
	c.mu.Lock()
	c.inflight[key] = cl
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer release()
		r := c.srv.Serve(rctx, req, m)
		c.mu.Lock()
		if c.inflight[key] == cl {
			delete(c.inflight, key)
		}
		c.mu.Unlock()
		c.endListen(listen)
		cancelled := rctx.Err() != nil
		cancel()
		if r.Msg != nil && !cancelled {
			_ = c.opts.Send(r.Msg)
		}
	}()
}

func (c *Conn) endListen(listen bool) {
	if listen {
		if c.opts.CloseListen != nil {
			c.opts.CloseListen()
		}
		c.mu.Lock()
		c.listens--
		c.mu.Unlock()
	}
}

// acquire takes n slots, or none when ctx ends or the Conn closes first.
func (c *Conn) acquire(ctx context.Context, n int) bool {
	for i := range n {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			c.release(i)
			return false
		case <-c.done:
			c.release(i)
			return false
		}
	}
	return true
}

func (c *Conn) release(n int) {
	for range n {
		<-c.slots
	}
}

// pumpSession starts sending the session's notifications once initialize
// has given it a subscription (again after a re-initialize replaced it).
func (c *Conn) pumpSession() {
	sub := c.sess.Subscription()
	c.mu.Lock()
	if sub == nil || sub == c.pumped || c.closing {
		c.mu.Unlock()
		return
	}
	c.pumped = sub
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		_ = Pump(c.streams, sub, nil, c.opts.Send)
	}()
}

// Close ends the connection: nothing new starts, the listen streams and
// the session's stream end abruptly (without a response), Close waits for
// the requests in flight to finish (cancel the ctx given to Handle to
// cancel them), then closes the session. Send is not called once Close
// has returned.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	close(c.done)
	c.mu.Unlock()
	c.stopStreams()
	c.wg.Wait()
	c.sess.Close()
}
