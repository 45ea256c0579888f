package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
)

var (
	// ErrNotFound: no live session has the id (never opened, ended,
	// evicted or revoked).
	ErrNotFound = errors.New("session: no such session")
	// ErrFull: every session slot is in use by clients within their
	// quotas.
	ErrFull = errors.New("session: every session slot is in use")
)

// Record is what a Store keeps of a session.
type Record struct {
	// Client is whom the session counts against in the per-client quota
	// (the transport's client key: a principal, or an address).
	Client string `json:"client"`
	// Capabilities is the client's capabilities object from initialize.
	Capabilities json.RawMessage `json:"caps,omitempty"`
	// Initialized says notifications/initialized arrived.
	Initialized bool `json:"init,omitempty"`
	// LogLevel is the level of logging/setLevel, or "".
	LogLevel string `json:"level,omitempty"`
	// Resources are the subscribed resource URIs, sorted.
	Resources []string `json:"res,omitempty"`
	// Rev is the store's revision of the record: it grows with every
	// change. A Store sets it; callers never do.
	Rev uint64 `json:"-"`
}

// Equal reports whether r and o hold the same session state (Rev aside).
func (r Record) Equal(o Record) bool {
	return r.Client == o.Client && string(r.Capabilities) == string(o.Capabilities) &&
		r.Initialized == o.Initialized && r.LogLevel == o.LogLevel && slices.Equal(r.Resources, o.Resources)
}

// Stats count a Store's sessions.
type Stats struct {
	Open    int   // live sessions
	Evicted int64 // ended because their client opened one over its quota
	Refused int64 // refused because every slot was in use
}

// A Store keeps session records under the session quotas. It is safe for
// concurrent use. Every method that names a session it does not hold
// returns ErrNotFound.
type Store interface {
	// Create admits a new session id with rec. When rec.Client already
	// holds its quota of sessions, the least recently used of them is
	// ended to make room and its id returned; when every slot is in use
	// by clients within their quotas, Create returns ErrFull.
	Create(ctx context.Context, id string, rec Record) (ended []string, err error)
	// Get returns the session's record and marks the session used.
	Get(ctx context.Context, id string) (Record, error)
	// Update applies change to the session's record and stores it,
	// returning what was stored. change may run more than once (a shared
	// store retries on a concurrent change): it must only edit the record.
	Update(ctx context.Context, id string, change func(*Record)) (Record, error)
	// Delete ends the session: every later Get of it, on any replica
	// sharing the store, returns ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Watch reports changes of the session's record until ctx is done: the
	// channel receives the latest record after a change (a slow reader
	// sees only the last of several), and is closed when the session ends
	// or ctx is done.
	Watch(ctx context.Context, id string) (<-chan Record, error)
	// Stats returns the store's session counts.
	Stats() Stats
}
