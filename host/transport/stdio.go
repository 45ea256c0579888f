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
)

// Defaults for StdioOptions.
const (
	DefaultMaxMessageBytes = 16 << 20
	DefaultMaxConcurrent   = mcp.DefaultMaxConcurrent
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
// basic/transports §stdio). The connection's rules (one legacy session,
// cancellation, concurrency, at most mcp.MaxListens listen streams) are
// those of [mcp.Conn]; this transport only frames the messages.
//
// ServeStdio returns nil on EOF once the requests in flight have finished,
// or ctx's error when ctx is done (after cancelling and waiting for the
// requests in flight). A read error is returned wrapped.
func ServeStdio(ctx context.Context, srv *mcp.Server, r io.Reader, w io.Writer, opts StdioOptions) error {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	st := &stdio{log: orDiscard(opts.Logger), w: w}
	conn := srv.NewConn(mcp.ConnOptions{Principal: opts.Principal, MaxConcurrent: opts.MaxConcurrent, Send: st.send})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	readErr := make(chan error, 1)
	go func() { readErr <- st.readLoop(ctx, r, conn, opts.MaxMessageBytes) }()

	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel() // give up on the requests in flight
	}
	conn.Close() // the reader may still be blocked: it starts nothing new
	st.wmu.Lock()
	st.werr = errStopped // nor does it write any more
	st.wmu.Unlock()
	return err
}

// stdio frames messages as lines.
type stdio struct {
	log  *slog.Logger
	wmu  sync.Mutex
	w    io.Writer
	werr error
}

func (st *stdio) readLoop(ctx context.Context, r io.Reader, conn *mcp.Conn, max int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLarge, err := readLine(br, max)
		if tooLarge {
			st.log.Warn("transport: stdio message over the size limit", "limit", max)
			_ = st.send(mcp.EncodeError(nil, &mcp.Error{
				Code:    mcp.CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: message larger than %d bytes.", max),
			}))
		} else if len(bytes.TrimSpace(line)) > 0 {
			conn.Handle(ctx, line) // readLine copied the line: it may outlive this call
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

// send writes one message and its newline under the writer lock, then
// recycles msg (mcp.ConnOptions.Send). After a write error every later
// message is dropped, and the error returned.
func (st *stdio) send(msg []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if st.werr != nil {
		return st.werr
	}
	// One Write per message (a line), from a reused buffer: Write does
	// not retain it.
	buf := append(append(mcp.ResponseBuffer(len(msg)+1), msg...), '\n')
	mcp.Recycle(msg)
	if _, err := st.w.Write(buf); err != nil {
		st.werr = fmt.Errorf("transport: write stdout: %w", err)
		st.log.Error("transport: write stdout", "err", err)
	}
	mcp.Recycle(buf)
	return st.werr
}

var errStopped = errors.New("transport: stdio stopped")

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
