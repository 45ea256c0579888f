package session

import (
	"context"
	"sync"
	"sync/atomic"
)

// Memory is the Store of one process: the sessions live as long as it
// does. At most perClient sessions of one client, and max in all.
type Memory struct {
	max, perClient int

	mu       sync.Mutex
	clock    uint64
	byID     map[string]*memRecord
	byClient map[string]map[*memRecord]struct{}

	evicted, refused atomic.Int64
}

type memRecord struct {
	id       string
	rec      Record
	used     uint64                   // the clock at its last Get
	watchers map[chan Record]struct{} // Watch; closed when the session ends
}

// NewMemory returns an empty Memory holding at most max sessions, at most
// perClient of one client.
func NewMemory(max, perClient int) *Memory {
	return &Memory{max: max, perClient: perClient,
		byID: map[string]*memRecord{}, byClient: map[string]map[*memRecord]struct{}{}}
}

// Create implements Store.
func (m *Memory) Create(_ context.Context, id string, rec Record) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ended []string
	own := m.byClient[rec.Client]
	switch {
	case len(own) >= m.perClient:
		var lru *memRecord
		for r := range own {
			if lru == nil || r.used < lru.used {
				lru = r
			}
		}
		m.endLocked(lru)
		m.evicted.Add(1)
		ended = append(ended, lru.id)
	case len(m.byID) >= m.max:
		m.refused.Add(1)
		return nil, ErrFull
	}
	if own = m.byClient[rec.Client]; own == nil {
		own = map[*memRecord]struct{}{}
		m.byClient[rec.Client] = own
	}
	m.clock++
	rec.Rev = 1
	r := &memRecord{id: id, rec: rec, used: m.clock}
	own[r] = struct{}{}
	m.byID[id] = r
	return ended, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byID[id]
	if r == nil {
		return Record{}, ErrNotFound
	}
	m.clock++
	r.used = m.clock
	return r.rec, nil
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, id string, change func(*Record)) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byID[id]
	if r == nil {
		return Record{}, ErrNotFound
	}
	next := r.rec
	next.Resources = append([]string(nil), r.rec.Resources...)
	change(&next)
	next.Client, next.Rev = r.rec.Client, r.rec.Rev+1 // the quota's key stays
	r.rec = next
	for ch := range r.watchers {
		select {
		case <-ch: // drop the older change unread
		default:
		}
		ch <- next
	}
	return next, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byID[id]
	if r == nil {
		return ErrNotFound
	}
	m.endLocked(r)
	return nil
}

// Watch implements Store.
func (m *Memory) Watch(ctx context.Context, id string) (<-chan Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byID[id]
	if r == nil {
		return nil, ErrNotFound
	}
	ch := make(chan Record, 1)
	if r.watchers == nil {
		r.watchers = map[chan Record]struct{}{}
	}
	r.watchers[ch] = struct{}{}
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, ok := r.watchers[ch]; ok {
			delete(r.watchers, ch)
			close(ch)
		}
	}()
	return ch, nil
}

// Stats implements Store.
func (m *Memory) Stats() Stats {
	m.mu.Lock()
	open := len(m.byID)
	m.mu.Unlock()
	return Stats{Open: open, Evicted: m.evicted.Load(), Refused: m.refused.Load()}
}

func (m *Memory) endLocked(r *memRecord) {
	delete(m.byID, r.id)
	if own := m.byClient[r.rec.Client]; own != nil {
		delete(own, r)
		if len(own) == 0 {
			delete(m.byClient, r.rec.Client)
		}
	}
	for ch := range r.watchers {
		close(ch)
	}
	r.watchers = nil
}

var _ Store = (*Memory)(nil)
