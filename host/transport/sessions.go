package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/mcp"
)

// Defaults of the legacy session quotas (HTTPOptions).
const (
	DefaultMaxSessions          = 1024
	DefaultMaxSessionsPerClient = 64
)

// httpSession is a legacy session reachable through Mcp-Session-Id.
type httpSession struct {
	s     *mcp.Session
	owner string // principal id that opened the session
	quota client // whom its quota counts against
	used  uint64 // the table's clock at the last request in it; guarded by the table's mu
}

// sessionTable holds the live legacy sessions under two bounds: at most
// perClient for one client (a principal; an anonymous client is its
// address), and at most max in all. A client at its bound loses its own
// least recently used session to a new one; when the table is full of
// sessions of clients under their bounds, a new session is refused. No
// client can end another's session.
type sessionTable struct {
	max, perClient int

	mu      sync.Mutex
	clock   uint64
	byID    map[string]*httpSession
	byQuota map[client]map[*httpSession]struct{}

	evicted, refused atomic.Int64
}

func newSessionTable(max, perClient int) *sessionTable {
	return &sessionTable{max: max, perClient: perClient,
		byID: map[string]*httpSession{}, byQuota: map[client]map[*httpSession]struct{}{}}
}

// errSessionsFull is why a session was refused: the table is full.
var errSessionsFull = errors.New("transport: every session slot is in use")

// get returns the live session id if the principal named owner opened it,
// and marks it used.
func (t *sessionTable) get(id, owner string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.byID[id]
	if hs == nil || hs.owner != owner {
		return nil
	}
	t.clock++
	hs.used = t.clock
	return hs
}

// add admits hs. It returns the session it ended to make room (one of
// hs's own client), or errSessionsFull.
func (t *sessionTable) add(hs *httpSession) (ended *httpSession, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	own := t.byQuota[hs.quota]
	switch {
	case len(own) >= t.perClient:
		for s := range own {
			if ended == nil || s.used < ended.used {
				ended = s
			}
		}
		t.endLocked(ended)
		t.evicted.Add(1)
	case len(t.byID) >= t.max:
		t.refused.Add(1)
		return nil, errSessionsFull
	}
	if own = t.byQuota[hs.quota]; own == nil {
		own = map[*httpSession]struct{}{}
		t.byQuota[hs.quota] = own
	}
	t.clock++
	hs.used = t.clock
	own[hs] = struct{}{}
	t.byID[hs.s.ID()] = hs
	return ended, nil
}

// end ends the session id if the principal named owner opened it.
func (t *sessionTable) end(id, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.byID[id]
	if hs == nil || hs.owner != owner {
		return false
	}
	t.endLocked(hs)
	return true
}

// closeAll ends every session.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, hs := range t.byID {
		t.endLocked(hs)
	}
}

func (t *sessionTable) endLocked(hs *httpSession) {
	delete(t.byID, hs.s.ID())
	if own := t.byQuota[hs.quota]; own != nil {
		delete(own, hs)
		if len(own) == 0 {
			delete(t.byQuota, hs.quota)
		}
	}
	hs.s.Close()
}

// SessionStats describe the legacy sessions of an HTTPHandler.
type SessionStats struct {
	Open    int   // live sessions
	Evicted int64 // sessions ended because their client opened one over its quota
	Refused int64 // sessions refused because every slot was in use
}

// SessionStats returns the handler's session counts, for metrics.
func (h *HTTPHandler) SessionStats() SessionStats {
	t := h.sessions
	t.mu.Lock()
	open := len(t.byID)
	t.mu.Unlock()
	return SessionStats{Open: open, Evicted: t.evicted.Load(), Refused: t.refused.Load()}
}

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
