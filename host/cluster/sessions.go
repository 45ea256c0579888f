package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/session"
)

// Bounds of the shared session store.
const (
	// opTimeout bounds one store operation: with NATS unreachable a legacy
	// request fails (503) rather than hangs.
	opTimeout = 2 * time.Second
	// casAttempts bounds the retries of a compare-and-swap that lost to a
	// concurrent change.
	casAttempts = 32
	// touchEvery is how often a replica records that a session is in use
	// (for the per-client quota's least-recently-used choice): at most once
	// per session and replica in this interval, not on every request.
	touchEvery = 30 * time.Second
	// markerAge is how long a deleted session's marker stays in the bucket
	// before the janitor purges it.
	markerAge = time.Hour
)

// SessionOptions configure a SessionStore.
type SessionOptions struct {
	// Name is the cluster's name (cluster.name): the bucket is
	// "<Name>_sessions".
	Name string
	// MaxSessions and MaxSessionsPerClient are the quotas
	// (http.maxSessions, http.maxSessionsPerClient), for the whole cluster.
	MaxSessions, MaxSessionsPerClient int
	// Logger receives the store's events; nil discards.
	Logger *slog.Logger
}

// SessionStore is a session.Store in a JetStream KV bucket shared by the
// replicas of a cluster. A session's record is the value of "s.<id>";
// each client's sessions, with when each was last used, are the value of
// "c.<digest of the client>", which Create updates with compare-and-swap,
// so the per-client quota holds across replicas. The global quota counts
// the sessions the replica's watch of the bucket has seen: replicas
// admitting sessions at the same moment may overshoot it by as many
// sessions as they admit before their watches catch up (milliseconds).
//
// NATS unreachable, every operation fails after opTimeout, and the
// transport answers 503: a 2025-11-25 session cannot be served without
// its record. A store started while NATS is down binds its bucket when
// NATS comes back.
type SessionStore struct {
	js     jetstream.JetStream
	opts   SessionOptions
	bucket string
	log    *slog.Logger
	now    func() time.Time

	kv atomic.Pointer[jetstream.KeyValue] // nil until bound

	mu       sync.Mutex
	ids      map[string]struct{}                       // live sessions, as the watch saw them
	watchers map[string]map[chan session.Record]uint64 // Watch: each channel's revision when it began
	touched  map[string]time.Time                      // this replica's last touch of each session

	evicted, refused atomic.Int64

	stop context.CancelFunc
	done chan struct{}
}

// NewSessionStore returns a store in js's bucket "<Name>_sessions",
// creating the bucket if needed (now, or once NATS is reachable), and
// starts following it. Close it when done.
func NewSessionStore(js jetstream.JetStream, opts SessionOptions) *SessionStore {
	if opts.Name == "" {
		opts.Name = "corral"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &SessionStore{js: js, opts: opts, bucket: opts.Name + "_sessions", log: log, now: time.Now,
		ids: map[string]struct{}{}, watchers: map[string]map[chan session.Record]uint64{},
		touched: map[string]time.Time{}, stop: stop, done: make(chan struct{})}
	go s.run(ctx)
	return s
}

// Close stops following the bucket and ends every Watch.
func (s *SessionStore) Close() {
	s.stop()
	<-s.done
}

// errUnbound: the bucket is not bound yet (NATS has been unreachable
// since the start).
var errUnbound = errors.New("cluster: session bucket not reachable yet")

func (s *SessionStore) kvOf() (jetstream.KeyValue, error) {
	if kv := s.kv.Load(); kv != nil {
		return *kv, nil
	}
	return nil, errUnbound
}

// bind creates or opens the bucket.
func (s *SessionStore) bind(ctx context.Context) (jetstream.KeyValue, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	kv, err := s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: s.bucket, Description: "corral 2025-11-25 sessions", History: 1, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: session bucket %s: %w", s.bucket, err)
	}
	s.kv.Store(&kv)
	return kv, nil
}

// run binds the bucket, then follows every session record in it (for the
// global count and for Watch) and purges old delete markers, until ctx
// is done.
func (s *SessionStore) run(ctx context.Context) {
	defer close(s.done)
	defer s.endWatches()
	var kv jetstream.KeyValue
	for kv == nil {
		var err error
		if kv, err = s.bind(ctx); err != nil {
			s.log.Warn("cluster: sessions wait for NATS", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
	janitor := time.NewTicker(10 * time.Minute)
	defer janitor.Stop()
	for ctx.Err() == nil {
		w, err := kv.Watch(ctx, "s.*")
		if err != nil {
			s.log.Warn("cluster: watch sessions", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		s.follow(ctx, w, janitor.C, kv)
		_ = w.Stop()
	}
}

// follow applies the watch's changes until ctx is done or the
// connection reconnects: the run loop then watches afresh, rather than
// wait for the old watch to notice that the server it was on is gone.
func (s *SessionStore) follow(ctx context.Context, w jetstream.KeyWatcher, janitor <-chan time.Time, kv jetstream.KeyValue) {
	reconnects := s.js.Conn().Stats().Reconnects
	check := time.NewTicker(time.Second)
	defer check.Stop()
	fresh := map[string]struct{}{} // the initial values, until they are all in
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			if s.js.Conn().Stats().Reconnects != reconnects {
				return
			}
		case <-janitor:
			pctx, cancel := context.WithTimeout(ctx, opTimeout)
			if err := kv.PurgeDeletes(pctx, jetstream.DeleteMarkersOlderThan(markerAge)); err != nil {
				s.log.Debug("cluster: purge session markers", "err", err)
			}
			cancel()
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return
			case e == nil: // the initial values are all in
				s.mu.Lock()
				s.ids, fresh = fresh, nil
				s.mu.Unlock()
			default:
				if fresh != nil && e.Operation() == jetstream.KeyValuePut {
					fresh[strings.TrimPrefix(e.Key(), "s.")] = struct{}{}
				}
				s.apply(e)
			}
		}
	}
}

// apply takes in one change of the bucket.
func (s *SessionStore) apply(e jetstream.KeyValueEntry) {
	id := strings.TrimPrefix(e.Key(), "s.")
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		delete(s.ids, id)
		delete(s.touched, id)
		for ch := range s.watchers[id] {
			close(ch)
		}
		delete(s.watchers, id)
		return
	}
	s.ids[id] = struct{}{}
	if len(s.watchers[id]) == 0 {
		return
	}
	var rec session.Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		s.log.Warn("cluster: a session record does not decode", "err", err)
		return
	}
	rec.Rev = e.Revision()
	for ch, since := range s.watchers[id] {
		if rec.Rev <= since {
			continue // the watch began with it, or after it
		}
		select {
		case <-ch: // drop the older change unread
		default:
		}
		ch <- rec
	}
}

func (s *SessionStore) endWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, chs := range s.watchers {
		for ch := range chs {
			close(ch)
		}
		delete(s.watchers, id)
	}
}

// indexEntry is one session in a client's index.
type indexEntry struct {
	ID   string `json:"id"`
	Used int64  `json:"used"` // Unix milliseconds
}

func recordKey(id string) string { return "s." + id }

// indexKey names a client's index by a digest: a client key may hold
// characters a KV key may not.
func indexKey(client string) string {
	sum := sha256.Sum256([]byte(client))
	return "c." + hex.EncodeToString(sum[:16])
}

// index reads a client's index and its revision (0: none yet).
func index(ctx context.Context, kv jetstream.KeyValue, key string) ([]indexEntry, uint64, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("cluster: session index: %w", err)
	}
	var idx []indexEntry
	if err := json.Unmarshal(e.Value(), &idx); err != nil {
		return nil, 0, fmt.Errorf("cluster: session index: %w", err)
	}
	return idx, e.Revision(), nil
}

// putIndex writes idx over revision rev (0: creates it); a concurrent
// change is jetstream.ErrKeyRevisionMismatch or ErrKeyExists.
func putIndex(ctx context.Context, kv jetstream.KeyValue, key string, idx []indexEntry, rev uint64) error {
	b, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("cluster: session index: %w", err)
	}
	if rev == 0 {
		_, err = kv.Create(ctx, key, b)
	} else {
		_, err = kv.Update(ctx, key, b, rev)
	}
	return err
}

func casLost(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// changeIndex applies change to a client's index with compare-and-swap.
func changeIndex(ctx context.Context, kv jetstream.KeyValue, key string, change func([]indexEntry) ([]indexEntry, error)) error {
	for range casAttempts {
		idx, rev, err := index(ctx, kv, key)
		if err != nil {
			return err
		}
		next, err := change(idx)
		if err != nil {
			return err
		}
		if err = putIndex(ctx, kv, key, next, rev); !casLost(err) {
			return err
		}
	}
	return fmt.Errorf("cluster: session index %s: too many concurrent changes", key)
}

// Create implements session.Store.
func (s *SessionStore) Create(ctx context.Context, id string, rec session.Record) ([]string, error) {
	kv, err := s.kvOf()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var evict string
	key := indexKey(rec.Client)
	err = changeIndex(ctx, kv, key, func(idx []indexEntry) ([]indexEntry, error) {
		evict = ""
		if len(idx) >= s.opts.MaxSessionsPerClient {
			idx = s.live(ctx, kv, idx)
		}
		if len(idx) >= s.opts.MaxSessionsPerClient {
			lru := slices.MinFunc(idx, func(a, b indexEntry) int { return int(a.Used - b.Used) })
			evict = lru.ID
			idx = slices.DeleteFunc(idx, func(e indexEntry) bool { return e.ID == lru.ID })
		} else if s.Stats().Open >= s.opts.MaxSessions {
			return nil, session.ErrFull
		}
		return append(idx, indexEntry{ID: id, Used: s.now().UnixMilli()}), nil
	})
	if errors.Is(err, session.ErrFull) {
		s.refused.Add(1)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	var ended []string
	if evict != "" {
		if err := kv.Purge(ctx, recordKey(evict)); err != nil {
			s.log.Warn("cluster: end an evicted session", "err", err)
		}
		s.evicted.Add(1)
		ended = append(ended, evict)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return ended, fmt.Errorf("cluster: session record: %w", err)
	}
	if _, err := kv.Create(ctx, recordKey(id), b); err != nil {
		return ended, fmt.Errorf("cluster: session record: %w", err)
	}
	s.mu.Lock()
	s.ids[id] = struct{}{} // counted now; the watch confirms it
	s.mu.Unlock()
	return ended, nil
}

// live keeps the index entries whose sessions still have a record (an
// entry outlives its session when a replica stopped between the two
// writes of a Delete).
func (s *SessionStore) live(ctx context.Context, kv jetstream.KeyValue, idx []indexEntry) []indexEntry {
	return slices.DeleteFunc(slices.Clone(idx), func(e indexEntry) bool {
		_, err := kv.Get(ctx, recordKey(e.ID))
		return errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
	})
}

// get reads a record and its revision.
func get(ctx context.Context, kv jetstream.KeyValue, id string) (session.Record, error) {
	e, err := kv.Get(ctx, recordKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return session.Record{}, session.ErrNotFound
	}
	if err != nil {
		return session.Record{}, fmt.Errorf("cluster: session record: %w", err)
	}
	var rec session.Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return session.Record{}, fmt.Errorf("cluster: session record: %w", err)
	}
	rec.Rev = e.Revision()
	return rec, nil
}

// Get implements session.Store.
func (s *SessionStore) Get(ctx context.Context, id string) (session.Record, error) {
	kv, err := s.kvOf()
	if err != nil {
		return session.Record{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rec, err := get(ctx, kv, id)
	if err == nil {
		s.touch(kv, id, rec.Client)
	}
	return rec, err
}

// touch records, at most once per touchEvery, that the session is in use.
func (s *SessionStore) touch(kv jetstream.KeyValue, id, client string) {
	now := s.now()
	s.mu.Lock()
	due := now.Sub(s.touched[id]) >= touchEvery
	if due {
		s.touched[id] = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		err := changeIndex(ctx, kv, indexKey(client), func(idx []indexEntry) ([]indexEntry, error) {
			idx = slices.Clone(idx)
			for i := range idx {
				if idx[i].ID == id {
					idx[i].Used = now.UnixMilli()
				}
			}
			return idx, nil
		})
		if err != nil {
			s.log.Debug("cluster: mark a session used", "err", err)
		}
	}()
}

// Update implements session.Store.
func (s *SessionStore) Update(ctx context.Context, id string, change func(*session.Record)) (session.Record, error) {
	kv, err := s.kvOf()
	if err != nil {
		return session.Record{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	for range casAttempts {
		rec, err := get(ctx, kv, id)
		if err != nil {
			return session.Record{}, err
		}
		next := rec
		next.Resources = slices.Clone(rec.Resources)
		change(&next)
		next.Client = rec.Client // the quota's key stays
		b, err := json.Marshal(next)
		if err != nil {
			return session.Record{}, fmt.Errorf("cluster: session record: %w", err)
		}
		rev, err := kv.Update(ctx, recordKey(id), b, rec.Rev)
		if casLost(err) {
			continue
		}
		if err != nil {
			return session.Record{}, fmt.Errorf("cluster: session record: %w", err)
		}
		next.Rev = rev
		return next, nil
	}
	return session.Record{}, fmt.Errorf("cluster: session %s: too many concurrent changes", id)
}

// Delete implements session.Store.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	kv, err := s.kvOf()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rec, err := get(ctx, kv, id)
	if err != nil {
		return err
	}
	err = kv.Purge(ctx, recordKey(id), jetstream.LastRevision(rec.Rev))
	if casLost(err) {
		// Changed since it was read: deleted by another DELETE, or updated.
		if _, gerr := get(ctx, kv, id); errors.Is(gerr, session.ErrNotFound) {
			return session.ErrNotFound
		}
		err = kv.Purge(ctx, recordKey(id))
	}
	if err != nil {
		return fmt.Errorf("cluster: delete session: %w", err)
	}
	s.mu.Lock()
	delete(s.ids, id)
	s.mu.Unlock()
	err = changeIndex(ctx, kv, indexKey(rec.Client), func(idx []indexEntry) ([]indexEntry, error) {
		return slices.DeleteFunc(slices.Clone(idx), func(e indexEntry) bool { return e.ID == id }), nil
	})
	if err != nil {
		s.log.Warn("cluster: drop a deleted session from its client's index", "err", err)
	}
	return nil
}

// Watch implements session.Store.
func (s *SessionStore) Watch(ctx context.Context, id string) (<-chan session.Record, error) {
	kv, err := s.kvOf()
	if err != nil {
		return nil, err
	}
	gctx, cancel := context.WithTimeout(ctx, opTimeout)
	rec, err := get(gctx, kv, id)
	cancel()
	if err != nil {
		return nil, err
	}
	ch := make(chan session.Record, 1)
	s.mu.Lock()
	if s.watchers[id] == nil {
		s.watchers[id] = map[chan session.Record]uint64{}
	}
	s.watchers[id][ch] = rec.Rev
	s.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
			return // endWatches closed it
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.watchers[id][ch]; ok {
			delete(s.watchers[id], ch)
			if len(s.watchers[id]) == 0 {
				delete(s.watchers, id)
			}
			close(ch)
		}
	}()
	return ch, nil
}

// Stats implements session.Store: Open is the cluster's live sessions as
// this replica's watch sees them; Evicted and Refused count what this
// replica did (sum them over the replicas for the cluster's).
func (s *SessionStore) Stats() session.Stats {
	s.mu.Lock()
	open := len(s.ids)
	s.mu.Unlock()
	return session.Stats{Open: open, Evicted: s.evicted.Load(), Refused: s.refused.Load()}
}

var _ session.Store = (*SessionStore)(nil)
