package notify

// Message is what crosses a [Bus] between the replicas of a cluster: a
// typed event, not JSON-RPC. It carries no principal: the receiving
// replica decides, per listener, who may hear it (Options.Visible).
type Message struct {
	Kind Kind
	// URI is the updated resource, for ResourceUpdated.
	URI string
	// Plugin is the plugin whose notify call it was.
	Plugin string
	// Generation is the origin's plugin-set generation when it was sent.
	Generation string
	// Origin is the replica it was born on (set by the Bus).
	Origin string
}

// Valid reports whether m is a message a Hub accepts from a Bus: a known
// kind, and a URI for a resource update.
func (m Message) Valid() bool {
	switch m.Kind {
	case ResourceUpdated:
		return m.URI != ""
	case ResourcesListChanged, PromptsListChanged, ToolsListChanged:
		return true
	}
	return false
}

// Bus carries the events that only one replica can see to the others. A
// Hub publishes on it the notify calls of its plugins; a replica's own
// plugin-set swaps and the file events on roots every replica watches
// stay local, each replica emitting its own. Publish is fire-and-forget:
// it neither blocks for long nor fails the caller, and a message published
// while the bus is down is lost (no replay; see Hub.Resync). The bus hands
// the messages of other replicas to Hub.Receive, never the replica's own.
//
// The default, a nil Bus, is the in-process hub alone; host/cluster
// implements one on NATS, and another engine (Redis pub/sub) would
// implement these two promises without touching the Hub.
type Bus interface {
	Publish(Message)
}

// Receive delivers a message another replica published, as if one of this
// replica's plugins had sent it: to the subscriptions that asked for it
// and, for a resource update, whose principal may see the URI here. It is
// not published on the bus again. Invalid messages are dropped; Receive
// reports whether m was delivered.
func (h *Hub) Receive(m Message) bool {
	if !m.Valid() {
		return false
	}
	h.Publish(m.Kind, m.URI)
	return true
}

// Resync tells every listener to list again: the list_changed
// notifications of all three lists, to the subscriptions that asked for
// each. The cluster bus calls it when it comes back after an outage, in
// which events may have been lost.
func (h *Hub) Resync() {
	h.ListsChanged(true, true, true)
}
