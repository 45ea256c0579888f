package notify

import (
	"slices"
	"sync"

	"github.com/corral-mcp/corral/abi"
)

// pendingKey identifies a coalescable notification.
type pendingKey struct {
	kind Kind
	uri  string
}

// Subscription is one stream's interest. Its owner waits on Ready, then
// drains with Take and writes what it got; Done closes when the hub shuts
// down. Close it when the stream ends. Safe for concurrent use.
type Subscription struct {
	hub       *Hub
	principal abi.Principal
	ready     chan struct{} // capacity 1: "something is pending"
	done      chan struct{}

	// Guarded by hub.mu.
	uris  map[string]struct{}
	lists [3]bool

	mu      sync.Mutex
	queue   []Event            // pending, in first-arrival order
	pending map[pendingKey]int // index into queue
	subs    int                // pending sub-resource updates
	dropped int64              // sub-resource updates coalesced into their subscribed URI
	closed  bool
}

// Principal returns whom the subscription serves.
func (s *Subscription) Principal() abi.Principal { return s.principal }

// Ready is signalled (capacity 1, never closed) when notifications are
// pending.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Done is closed when the hub closes or the subscription is closed.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Filter returns what the subscription holds now: the list kinds, and its
// resource URIs sorted.
func (s *Subscription) Filter() Filter {
	s.hub.mu.RLock()
	defer s.hub.mu.RUnlock()
	f := Filter{ResourcesListChanged: s.lists[0], PromptsListChanged: s.lists[1], ToolsListChanged: s.lists[2]}
	for u := range s.uris {
		f.Resources = append(f.Resources, u)
	}
	slices.Sort(f.Resources)
	return f
}

// Add subscribes to one more resource URI (a legacy resources/subscribe).
// It returns false when the subscription already holds MaxURIs URIs.
func (s *Subscription) Add(uri string) bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if s.isClosed() {
		return false
	}
	return s.hub.addLocked(s, uri)
}

// Remove unsubscribes from a resource URI and drops its pending update.
func (s *Subscription) Remove(uri string) {
	s.hub.mu.Lock()
	s.hub.removeLocked(s, uri)
	s.hub.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.pending[pendingKey{ResourceUpdated, uri}]; ok {
		s.queue = slices.Delete(s.queue, i, i+1)
		delete(s.pending, pendingKey{ResourceUpdated, uri})
		for j := i; j < len(s.queue); j++ {
			s.pending[pendingKey{s.queue[j].Kind, s.queue[j].URI}] = j
		}
	}
}

// push queues ev unless an equal one is pending. subscribed is the URI
// the subscription holds that ev.URI falls under ("" for list kinds).
func (s *Subscription) push(ev Event, subscribed string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	key := pendingKey{ev.Kind, ev.URI}
	if _, ok := s.pending[key]; ok {
		s.mu.Unlock()
		return
	}
	if ev.Kind == ResourceUpdated && ev.URI != subscribed {
		if s.subs >= s.hub.opts.MaxPending {
			// Too many distinct sub-resources pending: say that the
			// subscribed resource changed instead.
			s.dropped++
			ev.URI = subscribed
			key.uri = subscribed
			if _, ok := s.pending[key]; ok {
				s.mu.Unlock()
				return
			}
		} else {
			s.subs++
		}
	}
	s.pending[key] = len(s.queue)
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Take returns the pending notifications, oldest first, and clears them.
func (s *Subscription) Take() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.queue
	s.queue = nil
	clear(s.pending)
	s.subs = 0
	return out
}

// Coalesced returns how many sub-resource updates were folded into their
// subscribed URI because too many were pending.
func (s *Subscription) Coalesced() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close ends the subscription: nothing more is queued and Done closes.
func (s *Subscription) Close() {
	s.hub.drop(s)
	s.finish()
}

func (s *Subscription) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.queue = nil
	clear(s.pending)
	close(s.done)
}

func (s *Subscription) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
