package transport

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/mcp"
)

// Defaults of the admission limits in HTTPOptions.
const (
	DefaultReadBodyTimeout           = 30 * time.Second
	DefaultMaxConcurrentPerPrincipal = 256
	DefaultMaxConcurrentPerAddress   = 256
)

// bodyChunk is the most a body buffer starts with. Bodies up to it take
// one allocation of their own size; a longer one grows as its bytes
// arrive, so that a client declaring a large Content-Length and sending
// little holds little memory.
const bodyChunk = 64 << 10

// counter counts what is in progress per client: requests, listen
// streams.
type counter struct {
	mu sync.Mutex
	n  map[client]int
}

// acquire counts one of k in, unless k has max in progress.
func (f *counter) acquire(k client, max int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[k] >= max {
		return false
	}
	if f.n == nil {
		f.n = map[client]int{}
	}
	f.n[k]++
	return true
}

// release counts one of k out.
func (f *counter) release(k client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[k]--; f.n[k] <= 0 {
		delete(f.n, k)
	}
}

// AdmissionStats count the requests an HTTPHandler refused before serving
// them.
type AdmissionStats struct {
	Concurrency int64 // over their client's bound on requests in progress (429)
	BodyTimeout int64 // bodies slower than ReadBodyTimeout (408)
}

// AdmissionStats returns the handler's refusal counts, for metrics.
func (h *HTTPHandler) AdmissionStats() AdmissionStats {
	return AdmissionStats{Concurrency: h.refusedConcurrency.Load(), BodyTimeout: h.refusedBodyTimeout.Load()}
}

// RequestBound returns the hooks (mcp.ConnOptions.OpenRequest and
// CloseRequest) that count the requests of a connection opened by r for p
// against its client's bound on requests in progress, the one its POSTs
// count against: a WebSocket client opening many connections gets no
// more requests in progress than over HTTP.
func (h *HTTPHandler) RequestBound(r *http.Request, p abi.Principal) (open func() *mcp.Error, close func()) {
	k, max, who := h.clientBound(r, p)
	open = func() *mcp.Error {
		if !h.inflight.acquire(k, max) {
			h.refusedConcurrency.Add(1)
			return errTooManyRequests(max, who)
		}
		return nil
	}
	return open, func() { h.inflight.release(k) }
}

// clientBound returns whom r's requests in progress count against, its
// bound and what it is, for the error.
func (h *HTTPHandler) clientBound(r *http.Request, p abi.Principal) (c client, max int, who string) {
	c = h.clientOf(r, p)
	if c.byAddress() {
		return c, h.opts.MaxConcurrentPerAddress, "client address"
	}
	return c, h.opts.MaxConcurrentPerPrincipal, "principal"
}

func errTooManyRequests(max int, who string) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeRateLimited,
		Message: "Too many requests: " + strconv.Itoa(max) + " requests of this " + who + " are in progress; retry later."}
}

// admit counts r in against its client's bound on concurrent requests and
// returns the client, whom the caller counts out again (inflight.release)
// once, when the request is done or has become a stream governed by a
// bound of its own. When the bound is reached it answers 429 with a
// JSON-RPC error (CodeRateLimited, Retry-After: 1) and returns false.
func (h *HTTPHandler) admit(w http.ResponseWriter, r *http.Request, p abi.Principal) (client, bool) {
	k, max, who := h.clientBound(r, p)
	if !h.inflight.acquire(k, max) {
		h.refusedConcurrency.Add(1)
		h.log.Debug("transport: too many concurrent requests", "by", who)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, nil, errTooManyRequests(max, who))
		return client{}, false
	}
	return k, true
}

// errBodyTimeout is readRequestBody's error for a body that did not
// arrive within HTTPOptions.ReadBodyTimeout.
var errBodyTimeout = errors.New("transport: body read deadline passed")

// readRequestBody reads r's body whole, at most MaxBodyBytes, within
// ReadBodyTimeout of now, and clears the deadline once the body is in, so
// that it bounds the body alone. A writer that cannot set deadlines (a
// test's recorder) reads without one.
func (h *HTTPHandler) readRequestBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	d := readDeadlinerOf(w)
	if d != nil {
		if err := d.SetReadDeadline(time.Now().Add(h.opts.ReadBodyTimeout)); err != nil {
			return nil, fmt.Errorf("transport: body deadline: %w", err)
		}
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes), r.ContentLength)
	if d != nil {
		_ = d.SetReadDeadline(time.Time{})
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		h.refusedBodyTimeout.Add(1)
		return nil, errBodyTimeout
	}
	return body, err
}

// readDeadliner is a ResponseWriter that can bound the read of its
// request's body, as net/http's own writers can.
type readDeadliner interface {
	SetReadDeadline(time.Time) error
}

// readDeadlinerOf returns w, or the writer it wraps (Unwrap, as
// http.ResponseController follows), that can set a read deadline, or nil
// when none can. It asks the types themselves: ResponseController would
// build an error on every request to say that a writer cannot.
func readDeadlinerOf(w http.ResponseWriter) readDeadliner {
	for {
		switch t := w.(type) {
		case readDeadliner:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// readBody reads a body whole. The buffer starts at the declared length
// (or bodyChunk, whichever is smaller) and grows as bytes arrive, never
// past the declared length, so a body takes memory for what was sent,
// not for what was announced.
func readBody(r io.Reader, length int64) ([]byte, error) {
	size := int64(bodyChunk)
	if length >= 0 && length < size {
		size = length
	}
	b := make([]byte, 0, size+1) // +1: room to read the EOF without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("transport: read body: %w", err)
		}
		if len(b) == cap(b) {
			next := int64(2 * cap(b))
			if length > int64(len(b)) && next > length+1 {
				next = length + 1
			}
			b = append(make([]byte, 0, next), b...)
		}
	}
}
