package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
)

// Defaults for StdioOptions.
const (
	DefaultMaxMessageBytes = 16 << 20
	DefaultMaxConcurrent   = 16
)

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// MaxMessageBytes caps one incoming line (default 16 MiB). A longer
	// line is answered with -32600 and skipped; serving goes on.
	MaxMessageBytes int
	// MaxConcurrent bounds the requests served at once (default 16); the
	// reader waits for a free slot.
	MaxConcurrent int
	// Principal is who the process serves (stdio takes credentials from
	// its environment); zero means anonymous.
	Principal abi.Principal
	// Logger receives transport events; nil discards.
	Logger *slog.Logger
}

// ServeStdio serves newline-delimited JSON-RPC messages read from r,
// writing responses and notifications to w, one per line (spec 2026-07-28
// basic/transports §stdio). The process is one legacy session if it sees
// initialize. notifications/cancelled{requestId} cancels that request,
// which then gets no response.
//
// ServeStdio returns nil on EOF once the requests in flight have finished,
// or ctx's error when ctx is done (after cancelling and waiting for the
// requests in flight). A read error is returned wrapped.
func ServeStdio(ctx context.Context, srv *mcp.Server, r io.Reader, w io.Writer, opts StdioOptions) error {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	st := &stdio{
		srv:      srv,
		opts:     opts,
		log:      orDiscard(opts.Logger),
		w:        w,
		sess:     mcp.NewSession(""),
		inflight: map[string]*call{},
		slots:    make(chan struct{}, opts.MaxConcurrent),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.streams, st.stopStreams = context.WithCancel(ctx)
	defer st.stopStreams()

	readErr := make(chan error, 1)
	go func() { readErr <- st.readLoop(ctx, r) }()

	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel() // give up on the requests in flight
	}
	st.mu.Lock()
	st.closing = true // the reader may still be blocked: start nothing new
	st.mu.Unlock()
	st.stopStreams() // the transport is closing: listen streams end abruptly
	st.wg.Wait()
	st.wmu.Lock()
	st.werr = errStopped // a reader still blocked must not write any more
	st.wmu.Unlock()
	return err
}

type stdio struct {
	srv  *mcp.Server
	opts StdioOptions
	log  *slog.Logger
	sess *mcp.Session

	wmu  sync.Mutex
	w    io.Writer
	werr error

	mu       sync.Mutex
	inflight map[string]*call // raw request id -> the call serving it
	closing  bool             // ServeStdio is returning
	slots    chan struct{}
	wg       sync.WaitGroup

	// streams is the context of the long-lived streams (listen requests,
	// the session's notifications); stopStreams ends them at EOF.
	streams     context.Context
	stopStreams context.CancelFunc
	listens     int                  // listen requests in flight; guarded by mu
	pumped      *notify.Subscription // the session subscription being pumped; guarded by mu
}

// MaxListens caps the concurrent subscriptions/listen streams of one stdio
// connection. An open listen stream does not count against MaxConcurrent.
const MaxListens = 64

func (st *stdio) readLoop(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLarge, err := readLine(br, st.opts.MaxMessageBytes)
		if tooLarge {
			st.log.Warn("transport: stdio message over the size limit", "limit", st.opts.MaxMessageBytes)
			st.write(mcp.EncodeError(nil, &mcp.Error{
				Code:    mcp.CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: message larger than %d bytes.", st.opts.MaxMessageBytes),
			}))
		} else if len(bytes.TrimSpace(line)) > 0 {
			st.handle(ctx, line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("transport: read stdin: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// readLine reads one '\n'-terminated line without the newline. A line over
// max bytes is consumed and reported as tooLarge, its bytes dropped.
func readLine(br *bufio.Reader, max int) (line []byte, tooLarge bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLarge {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLarge, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLarge, err
	}
}

func (st *stdio) handle(ctx context.Context, line []byte) {
	// The line's bytes belong to us (readLine copies), so they may outlive
	// this call.
	m, derr := mcp.Decode(line)
	if derr == nil {
		if id := m.CancelledID(); id != nil {
			st.mu.Lock()
			if c, ok := st.inflight[string(id)]; ok {
				c.cancel()
			}
			st.mu.Unlock()
			return
		}
	}
	if derr == nil && m.IsResponse {
		// An answer to a server-to-client request: it takes no slot, as
		// the request waiting for it may hold the last one.
		st.srv.Serve(ctx, mcp.Request{Session: st.sess, Principal: st.opts.Principal}, m)
		return
	}
	// Everything else takes a slot, so that with MaxConcurrent 1 messages
	// are answered in order; initialize takes them all, as it changes the
	// session every later request relies on.
	n := 1
	listen := derr == nil && m.Method == "subscriptions/listen" && m.ID != nil
	switch {
	case derr == nil && m.Method == "initialize":
		n = st.opts.MaxConcurrent
	case listen:
		// Long-lived: it holds its slot only until its stream is open.
		st.mu.Lock()
		full := st.listens >= MaxListens
		if !full {
			st.listens++
		}
		st.mu.Unlock()
		if full {
			st.write(mcp.EncodeError(m.ID, &mcp.Error{Code: mcp.CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: at most %d listen streams per connection.", MaxListens)}))
			return
		}
	}
	for i := 0; i < n; i++ {
		select {
		case st.slots <- struct{}{}:
		case <-ctx.Done():
			st.release(i)
			return
		}
	}
	if derr != nil {
		if mcp.ShouldAnswer(m) {
			st.write(mcp.EncodeError(mcp.IDOf(m), derr))
		}
		st.release(n)
		return
	}
	req := mcp.Request{Session: st.sess, Principal: st.opts.Principal}
	if m.IsNotification() || m.IsResponse || n > 1 {
		// In order: these change session state later requests rely on.
		if r := st.srv.Serve(ctx, req, m); r.Msg != nil {
			st.write(r.Msg)
			mcp.Recycle(r.Msg) // write copies it
		}
		st.pumpSession()
		st.release(n)
		return
	}
	parent := ctx
	if listen {
		parent = st.streams
	}
	rctx, cancel := context.WithCancel(parent)
	req.Notify = st.notifier(rctx)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { st.release(n) }) }
	if listen {
		notify := req.Notify
		req.Notify = func(b []byte) error {
			err := notify(b)
			release() // the acknowledgement is out: free the slot
			return err
		}
	}
	key, c := string(m.ID), &call{cancel: cancel}
	st.mu.Lock()
	if st.closing {
		if listen {
			st.listens--
		}
		st.mu.Unlock()
		cancel()
		release()
		return
	}
	st.inflight[key] = c
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		defer release()
		r := st.srv.Serve(rctx, req, m)
		st.mu.Lock()
		if st.inflight[key] == c {
			delete(st.inflight, key)
		}
		if listen {
			st.listens--
		}
		st.mu.Unlock()
		cancelled := rctx.Err() != nil
		cancel()
		if r.Msg != nil && !cancelled {
			st.write(r.Msg)
			mcp.Recycle(r.Msg) // write copies it
		}
	}()
}

func (st *stdio) release(n int) {
	for range n {
		<-st.slots
	}
}

// write sends one message and its newline under the writer lock. After a
// write error every later message is dropped.
func (st *stdio) write(msg []byte) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if st.werr != nil {
		return
	}
	// One Write per message (a line), from a reused buffer: Write does
	// not retain it.
	buf := append(append(mcp.ResponseBuffer(len(msg)+1), msg...), '\n')
	if _, err := st.w.Write(buf); err != nil {
		st.werr = err
		st.log.Error("transport: write stdout", "err", err)
	}
	mcp.Recycle(buf)
}

var errStopped = errors.New("transport: stdio stopped")

// pumpSession starts writing the legacy session's notifications (its
// resource subscriptions and unsolicited list_changed) once initialize has
// given it a subscription.
func (st *stdio) pumpSession() {
	sub := st.sess.Subscription()
	st.mu.Lock()
	if sub == nil || sub == st.pumped || st.closing {
		st.mu.Unlock()
		return
	}
	st.pumped = sub
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		_ = mcp.Pump(st.streams, sub, nil, func(b []byte) error {
			st.write(b)
			return nil
		})
	}()
}

// notifier returns the Notify of a request served under ctx: its
// notifications go inline, one line each, until the request ends.
func (st *stdio) notifier(ctx context.Context) func([]byte) error {
	return func(msg []byte) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("transport: request ended: %w", err)
		}
		st.write(msg)
		st.wmu.Lock()
		defer st.wmu.Unlock()
		return st.werr
	}
}

// call is one request being served.
type call struct{ cancel context.CancelFunc }

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
