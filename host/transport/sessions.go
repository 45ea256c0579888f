package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/session"
)

// Defaults of the legacy session quotas (HTTPOptions).
const (
	DefaultMaxSessions          = 1024
	DefaultMaxSessionsPerClient = 64
)

// Answers carries a client's answer to a server-to-client request of the
// 2025-11-25 input bridge to the replica whose bridge waits for it, when
// the balancer sent the answer to another replica (host/cluster does it
// over NATS request/reply).
type Answers interface {
	// Tag is this replica's mcp.Options.ReplicaTag.
	Tag() string
	// Forward hands msg, a client's answer in the session whose Token.ID
	// is id, to the replica tagged tag, and reports whether a bridge there
	// was waiting for it.
	Forward(ctx context.Context, tag, id string, msg []byte) (bool, error)
}

// httpSession is a legacy session this replica serves: the live half
// (the hub subscription, the bridge's pending requests, GET streams) of a
// session whose token the client holds and whose record is in the Store.
type httpSession struct {
	s   *mcp.Session
	tok session.Token

	// Guarded by the liveTable's mu.
	rev  uint64 // the record revision s reflects
	busy int    // requests and streams in progress
	used uint64 // the table's clock at the last request in it
}

// liveTable holds the sessions this replica has served, by Token.ID: at
// most max idle ones (a session idle here may be busy on another replica;
// dropping its live half loses nothing, its record is in the Store).
type liveTable struct {
	max   int
	mu    sync.Mutex
	clock uint64
	byID  map[string]*httpSession
}

// acquire returns the live session of tok, made by resume when there is
// none, marked busy until release. The record rec brings it up to date.
func (t *liveTable) acquire(tok session.Token, rec session.Record, resume func(*mcp.Session)) *httpSession {
	t.mu.Lock()
	hs := t.byID[tok.ID]
	if hs == nil {
		t.mu.Unlock()
		fresh := &httpSession{s: mcp.NewSession(tok.ID), tok: tok, rev: rec.Rev}
		resume(fresh.s)
		t.mu.Lock()
		if hs = t.byID[tok.ID]; hs == nil {
			hs = fresh
			t.byID[tok.ID] = hs
			t.trimLocked()
		} else {
			fresh.s.Close() // another request made it first
		}
	}
	hs.busy++
	t.clock++
	hs.used = t.clock
	t.mu.Unlock()
	t.update(hs, rec)
	return hs
}

// update brings hs up to rec when rec is newer than what it shows: a
// change made through another replica.
func (t *liveTable) update(hs *httpSession, rec session.Record) {
	t.mu.Lock()
	newer := rec.Rev > hs.rev
	if newer {
		hs.rev = rec.Rev
	}
	t.mu.Unlock()
	if newer {
		hs.s.Restore(stateOf(rec))
	}
}

// add makes hs, a session this replica just opened, live.
func (t *liveTable) add(hs *httpSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID[hs.tok.ID] = hs
	t.clock++
	hs.used = t.clock
	t.trimLocked()
}

func (t *liveTable) release(hs *httpSession) {
	t.mu.Lock()
	hs.busy--
	t.mu.Unlock()
}

// seen records that the store holds revision rev of what hs shows.
func (t *liveTable) seen(hs *httpSession, rev uint64) {
	t.mu.Lock()
	hs.rev = max(hs.rev, rev)
	t.mu.Unlock()
}

func (t *liveTable) get(id string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// end closes the live half of the session id, which has ended.
func (t *liveTable) end(id string) {
	t.mu.Lock()
	hs := t.byID[id]
	delete(t.byID, id)
	t.mu.Unlock()
	if hs != nil {
		hs.s.Close()
	}
}

// trimLocked drops the least recently used idle sessions over max.
func (t *liveTable) trimLocked() {
	for len(t.byID) > t.max {
		var lru *httpSession
		for _, hs := range t.byID {
			if hs.busy == 0 && (lru == nil || hs.used < lru.used) {
				lru = hs
			}
		}
		if lru == nil {
			return
		}
		delete(t.byID, lru.tok.ID)
		lru.s.Close()
	}
}

func (t *liveTable) closeAll() {
	t.mu.Lock()
	all := t.byID
	t.byID = map[string]*httpSession{}
	t.mu.Unlock()
	for _, hs := range all {
		hs.s.Close()
	}
}

// stateOf is the mcp.SessionState a record holds.
func stateOf(rec session.Record) mcp.SessionState {
	return mcp.SessionState{Initialized: rec.Initialized, LogLevel: rec.LogLevel, Resources: rec.Resources}
}

// errNoSession: the Mcp-Session-Id names no session of the request's
// principal (404).
var errNoSession = errors.New("transport: no such session")

// lookup opens raw, an Mcp-Session-Id, for principal p and reads its
// record: errNoSession when it is not a live session of p (forged,
// another's, ended, revoked), another error when the store failed.
func (h *HTTPHandler) lookup(ctx context.Context, raw string, p abi.Principal) (session.Token, session.Record, error) {
	if h.closed.Load() {
		return session.Token{}, session.Record{}, errNoSession
	}
	tok, err := session.OpenToken(h.keys, raw)
	if err != nil || !tok.OwnedBy(p.ID) {
		return session.Token{}, session.Record{}, errNoSession
	}
	rec, err := h.store.Get(ctx, tok.ID)
	if errors.Is(err, session.ErrNotFound) {
		h.live.end(tok.ID) // ended elsewhere: revoked, or evicted
		return session.Token{}, session.Record{}, errNoSession
	}
	if err != nil {
		return session.Token{}, session.Record{}, fmt.Errorf("transport: session store: %w", err)
	}
	return tok, rec, nil
}

// session returns the live session raw names for p, busy until the
// caller releases it.
func (h *HTTPHandler) session(ctx context.Context, raw string, p abi.Principal) (*httpSession, error) {
	tok, rec, err := h.lookup(ctx, raw, p)
	if err != nil {
		return nil, err
	}
	return h.live.acquire(tok, rec, func(s *mcp.Session) {
		h.srv.Resume(s, p, tok.Version, rec.Capabilities, stateOf(rec))
	}), nil
}

// persist stores what serving a request changed in hs (before is its
// state ahead of the request): only the change, so that concurrent
// requests of the session on other replicas lose none of theirs.
func (h *HTTPHandler) persist(ctx context.Context, hs *httpSession, before mcp.SessionState) {
	after := hs.s.State()
	if after.Initialized == before.Initialized && after.LogLevel == before.LogLevel && slices.Equal(after.Resources, before.Resources) {
		return
	}
	rec, err := h.store.Update(ctx, hs.tok.ID, func(r *session.Record) {
		if after.Initialized != before.Initialized {
			r.Initialized = after.Initialized
		}
		if after.LogLevel != before.LogLevel {
			r.LogLevel = after.LogLevel
		}
		for _, u := range before.Resources {
			if !slices.Contains(after.Resources, u) {
				r.Resources = slices.DeleteFunc(r.Resources, func(v string) bool { return v == u })
			}
		}
		for _, u := range after.Resources {
			if !slices.Contains(r.Resources, u) {
				r.Resources = append(r.Resources, u)
			}
		}
		slices.Sort(r.Resources)
	})
	if err != nil {
		h.log.Warn("transport: session change not stored", "err", err)
		return
	}
	h.live.seen(hs, rec.Rev)
}

// open stores the session hs, which initialize just opened for client c
// (whom its quota counts against), and returns its Mcp-Session-Id; an
// error is session.ErrFull or the store's.
func (h *HTTPHandler) open(ctx context.Context, hs *httpSession, c client) (string, error) {
	hs.tok.Version = hs.s.Version()
	st := hs.s.State()
	rec := session.Record{Client: c.String(), Capabilities: hs.s.ClientCapabilities(),
		Initialized: st.Initialized, LogLevel: st.LogLevel, Resources: st.Resources}
	ended, err := h.store.Create(ctx, hs.tok.ID, rec)
	if err != nil {
		return "", err
	}
	for _, id := range ended {
		h.live.end(id)
	}
	if len(ended) > 0 {
		h.log.Info("transport: client over its session quota; ended its least recently used session", "client", rec.Client)
	}
	hs.rev = 1
	h.live.add(hs)
	return hs.tok.Seal(h.keys), nil
}

// DeliverAnswer hands msg, a client's answer forwarded by another replica
// (Answers), to the bridge of the session id waiting here, and reports
// whether one was.
func (h *HTTPHandler) DeliverAnswer(id string, msg []byte) bool {
	hs := h.live.get(id)
	if hs == nil {
		return false
	}
	m, err := mcp.Decode(msg)
	if err != nil || !m.IsResponse {
		return false
	}
	return hs.s.Deliver(m)
}

// SessionStats describe the legacy sessions of an HTTPHandler.
type SessionStats = session.Stats

// SessionStats returns the handler's session counts, for metrics.
func (h *HTTPHandler) SessionStats() SessionStats { return h.store.Stats() }

// client names whom a per-client quota counts a request against: its
// principal or, for a request without credentials (everyone without a
// token shares the anonymous principal), its client address bucket. It
// is comparable, so the counters key their maps by it without building
// a string per request.
type client struct {
	principal string       // the principal's id, when counted by principal
	addr      netip.Prefix // the address bucket (AddrBucket), when counted by address
}

// byAddress reports whether c counts an anonymous request by its address.
func (c client) byAddress() bool { return c.addr.IsValid() }

// String names c for logs and errors: "principal:ID" or "address:PREFIX".
func (c client) String() string {
	if c.byAddress() {
		return "address:" + c.addr.String()
	}
	return "principal:" + c.principal
}

// clientOf returns whom r's per-client quotas count against: p, when r
// carries credentials; otherwise r's client address, taken from the
// forwarding header only behind a trusted proxy (ClientAddr) and counted
// by AddrBucket; p again when r has no usable address.
func (h *HTTPHandler) clientOf(r *http.Request, p abi.Principal) client {
	if len(r.Header.Values("Authorization")) == 0 {
		if a := ClientAddr(r, h.opts.Proxies); a.IsValid() {
			return client{addr: AddrBucket(a)}
		}
	}
	return client{principal: p.ID}
}

// errTooManySessions answers an initialize refused because every session
// slot is in use by clients within their quotas (HTTP 503).
func (h *HTTPHandler) errTooManySessions() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInvalidRequest, Message: fmt.Sprintf(
		"Server busy: all %d sessions are in use; retry later, or use per-request _meta (2026-07-28), which needs no session.", h.opts.MaxSessions)}
}
