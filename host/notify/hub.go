// Package notify is corral's subscription hub: one fan-out point between
// the sources of change (the plugin set's swaps, the plugins' notify host
// function, watchers on granted file roots) and every listening stream of
// every transport (2026-07-28 subscriptions/listen, 2025-11-25 sessions,
// WebSocket connections).
//
// A [Subscription] never blocks a publisher: its pending notifications are
// a bounded, coalescing set (one entry per list kind and per resource URI),
// drained by whoever writes the stream. A slow stream therefore costs
// memory bounded by what it subscribed to, and delays nobody else; a flood
// of updates to one URI collapses into one pending notification.
//
// Delivery is authorization-aware: a resource update reaches a subscriber
// only when Options.Visible lets its principal see the URI.
package notify

import (
	"strings"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// Kind is the kind of a notification.
type Kind uint8

// Kinds of notification.
const (
	ResourceUpdated Kind = iota + 1
	ResourcesListChanged
	PromptsListChanged
	ToolsListChanged
)

// Method returns the MCP notification method of k.
func (k Kind) Method() string {
	switch k {
	case ResourceUpdated:
		return "notifications/resources/updated"
	case ResourcesListChanged:
		return "notifications/resources/list_changed"
	case PromptsListChanged:
		return "notifications/prompts/list_changed"
	case ToolsListChanged:
		return "notifications/tools/list_changed"
	}
	return ""
}

// KindOf maps an abi.Notify* value to a Kind (0 for unknown values).
func KindOf(n int32) Kind {
	switch n {
	case abi.NotifyResourceUpdated:
		return ResourceUpdated
	case abi.NotifyResourcesListChanged:
		return ResourcesListChanged
	case abi.NotifyPromptsListChanged:
		return PromptsListChanged
	case abi.NotifyToolsListChanged:
		return ToolsListChanged
	}
	return 0
}

// Event is one notification.
type Event struct {
	Kind Kind
	// URI is the updated resource, for ResourceUpdated.
	URI string
	// At is when the event was first published (for a coalesced event,
	// the earliest of its occurrences).
	At time.Time
}

// Filter is what a subscription asks for.
type Filter struct {
	ResourcesListChanged bool
	PromptsListChanged   bool
	ToolsListChanged     bool
	// Resources are the resource URIs whose updates are wanted. An update
	// of a sub-resource (the URI followed by "/" and more) matches too.
	Resources []string
}

// Defaults for Options.
const (
	DefaultMaxURIs    = 1024
	DefaultMaxPending = 1024
)

// Options configure a Hub.
type Options struct {
	// Visible reports whether principal p may see the resource at uri; a
	// resource update is delivered only where it does. Nil: everything is
	// visible to everyone.
	Visible func(p abi.Principal, uri string) bool
	// MaxURIs caps the resource URIs one subscription holds (default
	// 1024); Subscribe and Add ignore the rest.
	MaxURIs int
	// MaxPending caps the distinct sub-resource updates pending on one
	// subscription (default 1024). Beyond it a sub-resource update is
	// coalesced into an update of the subscribed URI it falls under.
	MaxPending int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Bus carries the plugins' notify calls to the other replicas of a
	// cluster; nil keeps them in this process.
	Bus Bus
	// Generation returns the plugin-set generation that messages on the
	// Bus carry; nil sends none.
	Generation func() string
}

// Hub fans notifications out to subscriptions. It is safe for concurrent
// use; the zero value is not usable, use New.
type Hub struct {
	opts Options

	mu     sync.RWMutex
	closed bool
	subs   map[*Subscription]struct{}
	byURI  map[string]map[*Subscription]struct{}
	lists  [3]map[*Subscription]struct{} // indexed by Kind-ResourcesListChanged
}

// New returns an empty Hub.
func New(opts Options) *Hub {
	if opts.MaxURIs <= 0 {
		opts.MaxURIs = DefaultMaxURIs
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Hub{opts: opts, subs: map[*Subscription]struct{}{}, byURI: map[string]map[*Subscription]struct{}{}}
	for i := range h.lists {
		h.lists[i] = map[*Subscription]struct{}{}
	}
	return h
}

// Subscribe registers a subscription for principal p. At most MaxURIs of
// f.Resources are kept (see Subscription.URIs). On a closed hub the
// subscription is born done.
func (h *Hub) Subscribe(p abi.Principal, f Filter) *Subscription {
	s := &Subscription{
		hub:       h,
		principal: p,
		ready:     make(chan struct{}, 1),
		done:      make(chan struct{}),
		uris:      map[string]struct{}{},
		pending:   map[pendingKey]int{},
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.done)
		s.closed = true
		return s
	}
	h.subs[s] = struct{}{}
	for k, on := range [3]bool{f.ResourcesListChanged, f.PromptsListChanged, f.ToolsListChanged} {
		if on {
			h.lists[k][s] = struct{}{}
			s.lists[k] = true
		}
	}
	for _, u := range f.Resources {
		h.addLocked(s, u)
	}
	return s
}

func (h *Hub) addLocked(s *Subscription, uri string) bool {
	if _, ok := s.uris[uri]; ok {
		return true
	}
	if len(s.uris) >= h.opts.MaxURIs {
		return false
	}
	s.uris[uri] = struct{}{}
	m := h.byURI[uri]
	if m == nil {
		m = map[*Subscription]struct{}{}
		h.byURI[uri] = m
	}
	m[s] = struct{}{}
	return true
}

func (h *Hub) removeLocked(s *Subscription, uri string) {
	if _, ok := s.uris[uri]; !ok {
		return
	}
	delete(s.uris, uri)
	if m := h.byURI[uri]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(h.byURI, uri)
		}
	}
}

// Publish delivers one notification to every subscription that asked for
// it (and, for resource updates, may see the URI). It never blocks on a
// subscriber.
func (h *Hub) Publish(k Kind, uri string) {
	now := h.opts.Now()
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return
	}
	switch k {
	case ResourcesListChanged, PromptsListChanged, ToolsListChanged:
		for s := range h.lists[k-ResourcesListChanged] {
			s.push(Event{Kind: k, At: now}, "")
		}
	case ResourceUpdated:
		if uri == "" {
			return
		}
		for s := range h.byURI[uri] {
			h.deliver(s, uri, uri, now)
		}
		// Subscriptions to an enclosing URI: every prefix ending at a "/".
		for i := len(uri) - 1; i > 0; i-- {
			if uri[i] != '/' {
				continue
			}
			if strings.HasSuffix(uri[:i], ":/") || strings.HasSuffix(uri[:i], ":") {
				break // inside "scheme://": no shorter prefix is a URI
			}
			for _, p := range [2]string{uri[:i], uri[:i+1]} {
				if p == uri {
					continue
				}
				for s := range h.byURI[p] {
					h.deliver(s, uri, p, now)
				}
			}
		}
	}
}

func (h *Hub) deliver(s *Subscription, uri, subscribed string, now time.Time) {
	if h.opts.Visible != nil && !h.opts.Visible(s.principal, uri) {
		return
	}
	s.push(Event{Kind: ResourceUpdated, URI: uri, At: now}, subscribed)
}

// Notify implements host/plugin's Notifier: a plugin's notify host
// function call (kind is an abi.Notify* value). The plugin runtime has
// already checked that the URI is inside the plugin's claims. It is
// published here and, with a Bus, to the other replicas.
func (h *Hub) Notify(plugin string, kind int32, uri string) {
	k := KindOf(kind)
	if k == 0 {
		return
	}
	h.Publish(k, uri)
	if h.opts.Bus != nil {
		m := Message{Kind: k, URI: uri, Plugin: plugin}
		if h.opts.Generation != nil {
			m.Generation = h.opts.Generation()
		}
		h.opts.Bus.Publish(m)
	}
}

// ListsChanged publishes the list_changed notifications of a swap of the
// plugin set that may have changed the given lists.
func (h *Hub) ListsChanged(resources, prompts, tools bool) {
	if resources {
		h.Publish(ResourcesListChanged, "")
	}
	if prompts {
		h.Publish(PromptsListChanged, "")
	}
	if tools {
		h.Publish(ToolsListChanged, "")
	}
}

// Len returns the number of live subscriptions.
func (h *Hub) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs)
}

// Close ends every subscription (their Done channels close) and makes
// later ones born done. Streams then end gracefully.
func (h *Hub) Close() {
	h.mu.Lock()
	subs := h.subs
	h.subs = map[*Subscription]struct{}{}
	h.byURI = map[string]map[*Subscription]struct{}{}
	for i := range h.lists {
		h.lists[i] = map[*Subscription]struct{}{}
	}
	h.closed = true
	h.mu.Unlock()
	for s := range subs {
		s.finish()
	}
}

func (h *Hub) drop(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	for i := range h.lists {
		delete(h.lists[i], s)
	}
	for u := range s.uris {
		if m := h.byURI[u]; m != nil {
			delete(m, s)
			if len(m) == 0 {
				delete(h.byURI, u)
			}
		}
	}
}
