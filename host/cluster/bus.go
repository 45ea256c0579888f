package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/corral-mcp/corral/host/notify"
)

// Bus is host/notify's Bus on core NATS: every replica publishes its
// plugins' notify calls on the subject "<cluster.name>.events" and
// subscribes to it, dropping its own. Nothing is stored or replayed. It is
// a Part of the App, started after its Conn.
type Bus struct {
	c       *Conn
	deliver func(notify.Message) bool
	sub     *nats.Subscription

	sent, received, dropped atomic.Int64
}

// BusStats counts a Bus's messages: sent to the others, received from
// them and delivered, and dropped (not sent while NATS was away, or
// received malformed).
type BusStats struct {
	Sent, Received, Dropped int64
}

// NewBus returns the bus of c; deliver (the Hub's Receive) is given every
// valid message of another replica.
func NewBus(c *Conn, deliver func(notify.Message) bool) *Bus {
	return &Bus{c: c, deliver: deliver}
}

// wire is a Message on the bus.
type wire struct {
	Kind       string `json:"k"`
	URI        string `json:"u,omitempty"`
	Plugin     string `json:"p,omitempty"`
	Generation string `json:"g,omitempty"`
	Origin     string `json:"o"`
}

var kindNames = map[notify.Kind]string{
	notify.ResourceUpdated:      "updated",
	notify.ResourcesListChanged: "resources",
	notify.PromptsListChanged:   "prompts",
	notify.ToolsListChanged:     "tools",
}

func kindOf(name string) notify.Kind {
	for k, n := range kindNames {
		if n == name {
			return k
		}
	}
	return 0
}

// Name implements the App's Part.
func (b *Bus) Name() string { return "cluster bus" }

// Start subscribes to the cluster's events. The subscription is made even
// while NATS is away, and takes effect when it is back.
func (b *Bus) Start(context.Context) error {
	sub, err := b.c.nc.Subscribe(b.c.subject("events"), b.receive)
	if err != nil {
		return fmt.Errorf("cluster: subscribe: %w", err)
	}
	b.sub = sub
	return nil
}

// Stop implements the App's Part.
func (b *Bus) Stop(context.Context) error {
	if b.sub == nil {
		return nil
	}
	return b.sub.Unsubscribe()
}

// Publish implements notify.Bus: it sends m to the other replicas, or
// counts it dropped while NATS is away.
func (b *Bus) Publish(m notify.Message) {
	data, err := json.Marshal(wire{Kind: kindNames[m.Kind], URI: m.URI, Plugin: m.Plugin, Generation: m.Generation,
		Origin: b.c.opts.Cluster.Replica})
	if err != nil || !b.c.nc.IsConnected() {
		b.dropped.Add(1)
		return
	}
	if err := b.c.nc.Publish(b.c.subject("events"), data); err != nil {
		b.dropped.Add(1)
		return
	}
	b.sent.Add(1)
}

func (b *Bus) receive(msg *nats.Msg) {
	var w wire
	if err := json.Unmarshal(msg.Data, &w); err != nil {
		b.dropped.Add(1)
		return
	}
	if w.Origin == b.c.opts.Cluster.Replica {
		return // our own echo
	}
	m := notify.Message{Kind: kindOf(w.Kind), URI: w.URI, Plugin: w.Plugin, Generation: w.Generation, Origin: w.Origin}
	if !b.deliver(m) {
		b.dropped.Add(1)
		return
	}
	b.received.Add(1)
}

// Stats returns the bus's counts.
func (b *Bus) Stats() BusStats {
	return BusStats{Sent: b.sent.Load(), Received: b.received.Load(), Dropped: b.dropped.Load()}
}

var _ notify.Bus = (*Bus)(nil)
