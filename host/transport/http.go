package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/session"
)

// Defaults for HTTPOptions.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultKeepAlive    = 15 * time.Second
	// DefaultMaxListensPerClient bounds the subscriptions/listen
	// streams one client has open on Streamable HTTP.
	DefaultMaxListensPerClient = 1024
)

// DefaultAllowedHosts are the hosts Host and Origin may name when
// HTTPOptions leaves them empty: loopback, any port.
var DefaultAllowedHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// HTTPOptions configure an HTTPHandler.
type HTTPOptions struct {
	// AllowedHosts are the values the Host header may take, guarding
	// against DNS rebinding: "name" matches any port, "name:port" exactly,
	// "*" anything. Empty means DefaultAllowedHosts.
	AllowedHosts []string
	// AllowedOrigins are the hosts an Origin header, when present, may
	// name, with the same syntax. Empty means DefaultAllowedHosts.
	AllowedOrigins []string
	// MaxBodyBytes caps a POST body (default 4 MiB); a larger one gets 413.
	MaxBodyBytes int64
	// KeepAlive is the interval of comment lines on a legacy session's GET
	// stream (default 15s).
	KeepAlive time.Duration
	// MaxSessions caps the live legacy sessions (default 1024); when they
	// are all in use, by clients each within MaxSessionsPerClient, a new
	// session is refused with 503.
	MaxSessions int
	// MaxSessionsPerClient caps the live legacy sessions of one client
	// (default 64): a principal, or for requests without credentials a
	// client address (behind Proxies: see ClientAddr). A client at its cap
	// that opens another loses its own least recently used session, never
	// anyone else's.
	MaxSessionsPerClient int
	// MaxListensPerClient bounds the subscriptions/listen streams one
	// client (counted as for MaxSessionsPerClient) has open at once
	// (default DefaultMaxListensPerClient); the excess is refused with 429
	// and -32600. On HTTP every stream is a request of its own, so the
	// bound is per client rather than per connection (mcp.MaxListens on
	// stdio and WebSocket).
	MaxListensPerClient int
	// Principal is who requests are served for; zero means anonymous.
	Principal abi.Principal
	// PrincipalFunc, when set, resolves each request's principal instead
	// of Principal (auth.PrincipalOf, behind auth's middleware). An error
	// refuses the request with 401. A legacy session belongs to the
	// principal that opened it; anyone else gets 404 for its id.
	PrincipalFunc func(*http.Request) (abi.Principal, error)
	// ReadBodyTimeout bounds the time a POST body takes to arrive
	// (default DefaultReadBodyTimeout); a slower one gets 408 and its
	// connection is closed. The headers' deadline is the http.Server's.
	ReadBodyTimeout time.Duration
	// MaxConcurrentPerPrincipal bounds the POSTs in progress of one
	// principal that presented credentials, MaxConcurrentPerAddress those
	// of one client address without credentials (defaults
	// DefaultMaxConcurrent…); the excess gets 429 with -31429 and
	// Retry-After before its body is read. A listen stream counts until it
	// opens, then against MaxListensPerClient only.
	MaxConcurrentPerPrincipal int
	MaxConcurrentPerAddress   int
	// Proxies say which peers may name the client address that limits
	// per address count (see ClientAddr); zero trusts none.
	Proxies TrustedProxies
	// Keys seals and opens Mcp-Session-Id tokens (host/session); replicas
	// sharing a secret serve each other's sessions. Nil is a random secret
	// of this handler's own.
	Keys *keys.Ring
	// Sessions keeps the legacy sessions' records and quotas; nil is a
	// session.Memory bounded by MaxSessions and MaxSessionsPerClient. A
	// store shared by replicas (host/cluster) lets any of them serve any
	// request of a session.
	Sessions session.Store
	// Answers, when set, forwards a client's answer to a server-to-client
	// request to the replica waiting for it (a cluster); nil on one
	// process.
	Answers Answers
	// Logger receives transport events; nil discards.
	Logger *slog.Logger
}

// HTTPHandler serves Streamable HTTP on one endpoint (mount it at /mcp):
// POST carries one JSON-RPC message; a legacy session (opened by a POSTed
// initialize) also has a GET event stream and ends with DELETE.
type HTTPHandler struct {
	srv  *mcp.Server
	opts HTTPOptions
	log  *slog.Logger

	keys   *keys.Ring
	store  session.Store
	live   liveTable
	closed atomic.Bool // Close was called

	listens counter // client -> listen streams open

	inflight counter // client -> POSTs in progress

	refusedConcurrency, refusedBodyTimeout atomic.Int64 // AdmissionStats
}

// NewHTTPHandler returns a handler serving srv.
func NewHTTPHandler(srv *mcp.Server, opts HTTPOptions) *HTTPHandler {
	if len(opts.AllowedHosts) == 0 {
		opts.AllowedHosts = DefaultAllowedHosts
	}
	if len(opts.AllowedOrigins) == 0 {
		opts.AllowedOrigins = DefaultAllowedHosts
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessionsPerClient <= 0 {
		opts.MaxSessionsPerClient = DefaultMaxSessionsPerClient
	}
	if opts.MaxListensPerClient <= 0 {
		opts.MaxListensPerClient = DefaultMaxListensPerClient
	}
	if opts.ReadBodyTimeout <= 0 {
		opts.ReadBodyTimeout = DefaultReadBodyTimeout
	}
	if opts.MaxConcurrentPerPrincipal <= 0 {
		opts.MaxConcurrentPerPrincipal = DefaultMaxConcurrentPerPrincipal
	}
	if opts.MaxConcurrentPerAddress <= 0 {
		opts.MaxConcurrentPerAddress = DefaultMaxConcurrentPerAddress
	}
	h := &HTTPHandler{srv: srv, opts: opts, log: orDiscard(opts.Logger), keys: opts.Keys, store: opts.Sessions,
		live: liveTable{max: opts.MaxSessions, byID: map[string]*httpSession{}}}
	if h.keys == nil {
		h.keys, _ = keys.New(nil, nil) // a random secret: cannot fail
	}
	if h.store == nil {
		h.store = session.NewMemory(opts.MaxSessions, opts.MaxSessionsPerClient)
	}
	return h
}

// Close ends the live half of every legacy session here and its GET
// stream; later legacy requests get 404, modern requests are still
// served. The records stay in the store: with a shared store, the other
// replicas go on serving the sessions.
func (h *HTTPHandler) Close() {
	h.closed.Store(true)
	h.live.closeAll()
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if refuseHostOrigin(w, r, h.opts.AllowedHosts, h.opts.AllowedOrigins, false, h.log) {
		return // behind a HostGuard (as corral serve mounts it) this never happens
	}
	p := h.opts.Principal
	if h.opts.PrincipalFunc != nil {
		var err error
		if p, err = h.opts.PrincipalFunc(r); err != nil {
			writeError(w, http.StatusUnauthorized, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Unauthorized."})
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, p)
	case http.MethodGet:
		h.get(w, r, p)
	case http.MethodDelete:
		h.delete(w, r, p)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Method not allowed."})
	}
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request, p abi.Principal) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request: Content-Type must be application/json."})
			return
		}
	}
	k, ok := h.admit(w, r, p)
	if !ok {
		return
	}
	admitted := true
	defer func() {
		if admitted {
			h.inflight.release(k)
		}
	}()
	body, err := h.readRequestBody(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.Is(err, errBodyTimeout) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, nil, &mcp.Error{
				Code:    mcp.CodeInvalidRequest,
				Message: fmt.Sprintf("Request Timeout: the body did not arrive within %v.", h.opts.ReadBodyTimeout),
			})
			return
		}
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, nil, &mcp.Error{
				Code:    mcp.CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: body larger than %d bytes.", h.opts.MaxBodyBytes),
			})
			return
		}
		h.log.Debug("transport: read body", "err", err)
		writeError(w, http.StatusBadRequest, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request: unreadable body."})
		return
	}
	m, derr := mcp.Decode(body)
	if derr != nil {
		writeError(w, http.StatusBadRequest, mcp.IDOf(m), derr)
		return
	}
	if m.IsResponse {
		// An answer to a server-to-client request of the session it names
		// (sent on a POST's event stream); routed within that session only.
		if id := r.Header.Get(HeaderSessionID); id != "" && !m.Modern() {
			h.answer(r.Context(), id, p, m, body)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req := mcp.Request{Principal: p}
	var newSession, hs *httpSession
	var before mcp.SessionState // hs's state ahead of the request
	switch {
	case m.Modern():
		// Stateless: Mcp-Session-Id is ignored, never minted or echoed.
		if herr := checkHeaders(r.Header, m); herr != nil {
			writeError(w, http.StatusBadRequest, m.ID, herr)
			return
		}
		req.Header = r.Header // the Mcp-Param-* headers, checked after visibility
	case m.Method == "initialize":
		tok, err := session.NewToken(p.ID)
		if err != nil {
			h.log.Error("transport: mint session id", "err", err)
			writeError(w, http.StatusInternalServerError, m.ID, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error."})
			return
		}
		newSession = &httpSession{s: mcp.NewSession(tok.ID), tok: tok}
		req.Session = newSession.s
	case r.Header.Get(HeaderSessionID) != "":
		var err error
		if hs, err = h.session(r.Context(), r.Header.Get(HeaderSessionID), p); err != nil {
			h.sessionError(w, m.ID, err)
			return
		}
		defer h.live.release(hs)
		if v := r.Header.Get(keyProtocolVersion); v != "" && v != hs.s.Version() {
			writeError(w, http.StatusBadRequest, m.ID, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request: MCP-Protocol-Version differs from the session's version."})
			return
		}
		req.Session = hs.s
		before = hs.s.State()
	}

	if m.IsNotification() {
		h.srv.Serve(r.Context(), req, m)
		if hs != nil {
			h.persist(context.WithoutCancel(r.Context()), hs, before)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}

	if m.Modern() && m.Method == "subscriptions/listen" {
		if !h.listens.acquire(k, h.opts.MaxListensPerClient) {
			writeError(w, http.StatusTooManyRequests, m.ID, h.errTooManyListens())
			return
		}
		defer h.listens.release(k)
		// A stream now, bounded as one, not as a request in progress.
		h.inflight.release(k)
		admitted = false
	}
	out := &responder{w: w, sse: wantsSSEOnly(r.Header.Get("Accept"))}
	req.Notify = out.notify
	if hs != nil {
		// A response that turns into a stream may wait long (the input
		// bridge): it follows the session's record meanwhile, so that a
		// DELETE through another replica ends the wait as one here does.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		out.streaming = func() { go h.watch(ctx, hs) }
	}
	reply := h.srv.Serve(r.Context(), req, m)
	if reply.Msg == nil {
		return // cancelled: the client is gone, send nothing
	}
	if newSession != nil && reply.Err == nil {
		id, err := h.open(r.Context(), newSession, k)
		if err != nil {
			newSession.s.Close()
			if errors.Is(err, session.ErrFull) {
				h.log.Warn("transport: session refused: every slot in use", "max", h.opts.MaxSessions)
				writeError(w, http.StatusServiceUnavailable, m.ID, h.errTooManySessions())
			} else {
				h.sessionError(w, m.ID, err)
			}
			mcp.Recycle(reply.Msg)
			return
		}
		w.Header().Set(HeaderSessionID, id)
	}
	if hs != nil {
		// Stored before the response goes out: the client's next request,
		// wherever it lands, sees what this one changed.
		h.persist(context.WithoutCancel(r.Context()), hs, before)
	}
	out.respond(statusFor(reply.Err, m.Modern()), reply.Msg)
	mcp.Recycle(reply.Msg) // written synchronously: nothing refers to it now
}

// statusFor maps an error to the HTTP status of its response.
func statusFor(e *mcp.Error, modern bool) int {
	switch {
	case e == nil:
		return http.StatusOK
	case e.Envelope:
		return http.StatusBadRequest
	}
	switch e.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingClientCapability, mcp.CodeUnsupportedVersion:
		return http.StatusBadRequest
	case mcp.CodeRateLimited:
		return http.StatusTooManyRequests
	case mcp.CodeMethodNotFound:
		if modern {
			return http.StatusNotFound
		}
	}
	return http.StatusOK
}

// errTooManyListens refuses a listen stream over MaxListensPerClient.
func (h *HTTPHandler) errTooManyListens() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInvalidRequest,
		Message: fmt.Sprintf("Invalid Request: at most %d listen streams per client.", h.opts.MaxListensPerClient)}
}

// ListenBound returns the hooks (mcp.ConnOptions.OpenListen and
// CloseListen) that count the listen streams of a connection opened by r
// for p against its client's MaxListensPerClient, the bound its listen
// streams over HTTP count against: a WebSocket client opening many
// connections gets no more streams than over HTTP.
func (h *HTTPHandler) ListenBound(r *http.Request, p abi.Principal) (open func() *mcp.Error, close func()) {
	c := h.clientOf(r, p)
	open = func() *mcp.Error {
		if !h.listens.acquire(c, h.opts.MaxListensPerClient) {
			return h.errTooManyListens()
		}
		return nil
	}
	return open, func() { h.listens.release(c) }
}

// wantsSSEOnly reports whether an Accept header admits text/event-stream
// but not JSON; such a client gets its response as an event stream.
func wantsSSEOnly(accept string) bool {
	sse, js := false, false
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/event-stream":
			sse = true
		case "application/json", "application/*", "*/*":
			js = true
		}
	}
	return sse && !js
}

// responder writes one request's response: JSON, or an event stream once
// a notification precedes the response (or the client accepts only SSE).
type responder struct {
	mu        sync.Mutex
	w         http.ResponseWriter
	sse       bool
	started   bool   // SSE headers sent
	streaming func() // called when a notification turns the response into a stream; may be nil
}

func (o *responder) startSSE() {
	if o.started {
		return
	}
	o.started, o.sse = true, true
	hd := o.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
}

func (o *responder) event(msg []byte) error {
	buf := mcp.ResponseBuffer(len(msg) + 24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	_, err := o.w.Write(buf)
	mcp.Recycle(buf) // Write does not retain it
	if err != nil {
		return fmt.Errorf("transport: write event: %w", err)
	}
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// send writes one event on a stream already open (the GET stream).
func (o *responder) send(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.event(msg)
}

// notify sends a request-scoped notification ahead of the response,
// switching the response to an event stream.
func (o *responder) notify(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.started && o.streaming != nil {
		o.streaming()
	}
	o.startSSE()
	return o.event(msg)
}

func (o *responder) respond(status int, msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sse && (o.started || status == http.StatusOK) {
		o.startSSE()
		_ = o.event(msg) // the client may be gone; nothing to do
		return
	}
	writeJSON(o.w, status, msg)
}

// jsonContentType is the Content-Type value of every JSON response. The
// slice is shared by all responses; nothing modifies header values in place.
var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

func writeError(w http.ResponseWriter, status int, id []byte, e *mcp.Error) {
	writeJSON(w, status, mcp.EncodeError(id, e))
}

// get opens a legacy session's standalone event stream. Modern clients
// have no GET (405).
func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request, p abi.Principal) {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Method not allowed: POST one JSON-RPC message."})
		return
	}
	hs, err := h.session(r.Context(), id, p)
	if err != nil {
		h.sessionError(w, nil, err)
		return
	}
	defer h.live.release(hs)
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Not acceptable: the stream is text/event-stream."})
		return
	}
	// Changes made through other replicas (resources/subscribe, DELETE)
	// reach this stream through the store.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	changes, err := h.store.Watch(ctx, hs.tok.ID)
	if err != nil {
		h.sessionError(w, nil, err)
		return
	}
	go h.follow(ctx, hs, changes)
	o := &responder{w: w}
	o.startSSE()
	if err := o.comment("stream open"); err != nil {
		return
	}
	// The session's notifications (resource updates it subscribed to,
	// unsolicited list_changed) go on this stream; with several GET
	// streams open, each notification goes on one of them.
	err = mcp.PumpSession(ctx, hs.s, o.send, h.opts.KeepAlive, func() error {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.comment("keepalive")
	})
	h.log.Debug("transport: session stream ended", "err", err)
}

func (o *responder) comment(text string) error {
	if _, err := io.WriteString(o.w, ": "+text+"\n\n"); err != nil {
		return fmt.Errorf("transport: write comment: %w", err)
	}
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// delete ends a legacy session. Modern clients have no DELETE (405).
func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request, p abi.Principal) {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Method not allowed: POST one JSON-RPC message."})
		return
	}
	tok, _, err := h.lookup(r.Context(), id, p)
	if err == nil {
		err = h.store.Delete(r.Context(), tok.ID)
	}
	if errors.Is(err, session.ErrNotFound) {
		err = errNoSession // ended by a concurrent DELETE
	}
	if err != nil {
		h.sessionError(w, nil, err)
		return
	}
	h.live.end(tok.ID)
	w.WriteHeader(http.StatusNoContent)
}

// watch follows hs's session record until ctx is done (follow).
func (h *HTTPHandler) watch(ctx context.Context, hs *httpSession) {
	changes, err := h.store.Watch(ctx, hs.tok.ID)
	switch {
	case errors.Is(err, session.ErrNotFound):
		h.live.end(hs.tok.ID) // ended elsewhere already
	case err != nil:
		h.log.Warn("transport: follow a session", "err", err)
	default:
		h.follow(ctx, hs, changes)
	}
}

// follow applies the record changes of hs's session to hs while one of
// its streams is open, and ends hs when the session ends elsewhere.
func (h *HTTPHandler) follow(ctx context.Context, hs *httpSession, changes <-chan session.Record) {
	for rec := range changes {
		h.live.update(hs, rec)
	}
	if ctx.Err() == nil {
		h.live.end(hs.tok.ID)
	}
}

// answer routes m, a client's answer in the session raw names, to the
// bridge waiting for it: here, or on the replica its id names.
func (h *HTTPHandler) answer(ctx context.Context, raw string, p abi.Principal, m *mcp.Message, body []byte) {
	tok, _, err := h.lookup(ctx, raw, p)
	if err != nil {
		return
	}
	if hs := h.live.get(tok.ID); hs != nil && hs.s.Deliver(m) {
		return
	}
	tag, ok := mcp.RequestTag(m)
	if !ok || h.opts.Answers == nil || tag == h.opts.Answers.Tag() {
		return // nobody waits for it: dropped
	}
	if _, err := h.opts.Answers.Forward(ctx, tag, tok.ID, body); err != nil {
		h.log.Warn("transport: forward a client's answer", "replica", tag, "err", err)
	}
}

// sessionError answers a request whose session could not be had: 404 when
// it does not exist, 503 when the store failed.
func (h *HTTPHandler) sessionError(w http.ResponseWriter, id []byte, err error) {
	if errors.Is(err, errNoSession) {
		writeError(w, http.StatusNotFound, id, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Session not found."})
		return
	}
	h.log.Error("transport: session store", "err", err)
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, id, &mcp.Error{Code: mcp.CodeInternalError, Message: "Service unavailable: the session store cannot be reached; retry."})
}
