package cluster

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/notify"
)

// replica is one replica's notification path: its connection, its bus and
// its hub, wired as the App wires them.
type busReplica struct {
	conn *Conn
	bus  *Bus
	hub  *notify.Hub

	mu   sync.Mutex
	msgs []notify.Message // what the bus delivered
}

// newBusReplica starts replica id against url. Nobody but bob is denied
// secret:// resources.
func newBusReplica(t *testing.T, url, id string) *busReplica {
	t.Helper()
	r := &busReplica{}
	r.conn = NewConn(Options{
		Cluster:       config.Cluster{NATS: []string{url}, Name: "test", Replica: id},
		ReconnectWait: 20 * time.Millisecond, Timeout: time.Second,
		OnConnect: func() { r.hub.Resync() },
	})
	r.bus = NewBus(r.conn, func(m notify.Message) bool {
		r.mu.Lock()
		r.msgs = append(r.msgs, m)
		r.mu.Unlock()
		return r.hub.Receive(m)
	})
	r.hub = notify.New(notify.Options{
		Bus: r.bus, Generation: func() string { return "gen-" + id },
		Visible: func(p abi.Principal, uri string) bool { return p.ID != "bob" || !strings.HasPrefix(uri, "secret:") },
	})
	if err := r.conn.Connect(); err != nil {
		t.Fatal(err)
	}
	if err := r.bus.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.bus.Stop(t.Context())
		r.conn.Stop(t.Context())
		r.hub.Close()
	})
	return r
}

// ready waits until the replica is connected and its subscription is on
// the server.
func (r *busReplica) ready(t *testing.T) {
	t.Helper()
	eventually(t, r.conn.opts.Cluster.Replica+" connected", func() bool { return r.conn.Status().Connected })
	if err := r.conn.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func (r *busReplica) notify(kind int32, uri string) { r.hub.Notify("p", kind, uri) }

// wait returns the next events of s as "kind uri" strings, failing after
// 10 s without any.
func waitEvents(t *testing.T, s *notify.Subscription) []string {
	t.Helper()
	select {
	case <-s.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10s")
	}
	var out []string
	for _, e := range s.Take() {
		out = append(out, strings.TrimPrefix(e.Kind.Method(), "notifications/")+" "+e.URI)
	}
	return out
}

// TestBusCrossesReplicas: a plugin's notify call on one replica reaches
// the listeners of another, each seeing what its own visibility allows;
// the message names its plugin, generation and origin; a replica's own
// set swaps stay home; a replica never hears its own echo.
func TestBusCrossesReplicas(t *testing.T) {
	n := startServer(t)
	a, b := newBusReplica(t, n.url(), "a"), newBusReplica(t, n.url(), "b")
	a.ready(t)
	b.ready(t)

	alice := b.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x", "secret://s"}, ToolsListChanged: true})
	bob := b.hub.Subscribe(abi.Principal{ID: "bob"}, notify.Filter{Resources: []string{"test://x", "secret://s"}})
	home := a.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x", "test://m"}})

	// A set swap on a is a's alone; the notify call after it crosses, and
	// would come after the swap if the swap crossed too.
	a.hub.ListsChanged(true, true, true)
	a.notify(abi.NotifyResourceUpdated, "secret://s")
	if got, want := waitEvents(t, alice), []string{"resources/updated secret://s"}; !slices.Equal(got, want) {
		t.Errorf("alice on b after a's swap and notify: %q, want %q", got, want)
	}
	a.notify(abi.NotifyResourceUpdated, "test://x")
	if got, want := waitEvents(t, bob), []string{"resources/updated test://x"}; !slices.Equal(got, want) {
		t.Errorf("bob on b (secret:// hidden from him): %q, want %q", got, want)
	}
	if got, want := waitEvents(t, alice), []string{"resources/updated test://x"}; !slices.Equal(got, want) {
		t.Errorf("alice on b: %q, want %q", got, want)
	}
	a.notify(abi.NotifyToolsListChanged, "")
	if got, want := waitEvents(t, alice), []string{"tools/list_changed "}; !slices.Equal(got, want) {
		t.Errorf("alice on b after a plugin's list_changed: %q, want %q", got, want)
	}

	// a's listener hears its replica's events once, at once: its echo
	// would arrive before b's marker, which a's events precede.
	if got := waitEvents(t, home); !slices.Equal(got, []string{"resources/updated test://x"}) {
		t.Errorf("a's own listener: %q", got)
	}
	b.notify(abi.NotifyResourceUpdated, "test://m")
	if got, want := waitEvents(t, home), []string{"resources/updated test://m"}; !slices.Equal(got, want) {
		t.Errorf("a's own listener after b's marker: %q, want %q (an echo of its own event?)", got, want)
	}

	b.mu.Lock()
	first := b.msgs[0]
	b.mu.Unlock()
	if want := (notify.Message{Kind: notify.ResourceUpdated, URI: "secret://s", Plugin: "p", Generation: "gen-a", Origin: "a"}); first != want {
		t.Errorf("b received %+v, want %+v", first, want)
	}
	// Received is counted once the hub has taken the event, which may
	// be after home heard it.
	eventually(t, "a's bus stats: 3 sent, 1 received, none dropped", func() bool {
		st := a.bus.Stats()
		return st.Sent == 3 && st.Received == 1 && st.Dropped == 0
	})
}

// TestBusDropsMalformed: what another replica (or anything with access
// to the subject) sends that is not a valid event is counted and dropped.
func TestBusDropsMalformed(t *testing.T) {
	n := startServer(t)
	b := newBusReplica(t, n.url(), "b")
	b.ready(t)
	s := b.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x"}, ToolsListChanged: true})
	raw := startConn(t, n.url(), "raw")
	eventually(t, "raw connected", func() bool { return raw.Status().Connected })
	for _, data := range []string{`not json`, `{"k":"nothing","o":"z"}`, `{"k":"updated","o":"z"}`, `{"k":"updated","u":"test://x","o":"z"}`} {
		if err := raw.nc.Publish("test.events", []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := waitEvents(t, s), []string{"resources/updated test://x"}; !slices.Equal(got, want) {
		t.Errorf("delivered %q, want only the valid event %q", got, want)
	}
	eventually(t, "stats: 3 dropped, 1 received", func() bool { // counted after the hub took it
		st := b.bus.Stats()
		return st.Dropped == 3 && st.Received == 1
	})
}

// TestBusServerRestart: NATS going away degrades the replicas (their
// events are dropped, not queued for later) and never stops them; when
// the server is back on its port and store, they reconnect, every
// listener is told to list again, and events cross again.
func TestBusServerRestart(t *testing.T) {
	n := startServer(t)
	a, b := newBusReplica(t, n.url(), "a"), newBusReplica(t, n.url(), "b")
	a.ready(t)
	b.ready(t)
	s := b.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x", "test://y"}, ToolsListChanged: true, PromptsListChanged: true})

	n.stop()
	eventually(t, "a disconnected", func() bool { return !a.conn.Status().Connected })
	a.notify(abi.NotifyResourceUpdated, "test://x") // lost
	if st := a.bus.Stats(); st.Dropped != 1 {
		t.Errorf("a's bus while NATS is down: %+v, want the event dropped", st)
	}
	if st := a.conn.Status(); st.LastError == "" || st.Server != "" {
		t.Errorf("status while down: %+v", st)
	}

	n.start()
	a.ready(t)
	b.ready(t)
	if got, want := waitEvents(t, s), []string{"prompts/list_changed ", "tools/list_changed "}; !slices.Equal(got, want) {
		t.Errorf("b's listener after the reconnect: %q, want %q (resync)", got, want)
	}
	a.notify(abi.NotifyResourceUpdated, "test://y")
	if got, want := waitEvents(t, s), []string{"resources/updated test://y"}; !slices.Equal(got, want) {
		t.Errorf("after the reconnect: %q, want %q (and no replay of test://x)", got, want)
	}
	if st := a.conn.Status(); st.Reconnects < 1 || !st.Connected || st.Server == "" {
		t.Errorf("a's status after the restart: %+v", st)
	}
}

// TestBusJoinsLater: a replica started while NATS is down starts, serves
// its own listeners, and joins the cluster when NATS comes up.
func TestBusJoinsLater(t *testing.T) {
	n := startServer(t)
	n.stop()
	a := newBusReplica(t, n.url(), "a")
	if a.conn.Status().Connected {
		t.Fatal("connected with no server")
	}
	home := a.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x"}})
	a.notify(abi.NotifyResourceUpdated, "test://x")
	if got := waitEvents(t, home); !slices.Equal(got, []string{"resources/updated test://x"}) {
		t.Errorf("a's own listener without NATS: %q", got)
	}

	n.start()
	b := newBusReplica(t, n.url(), "b")
	a.ready(t)
	b.ready(t)
	s := b.hub.Subscribe(abi.Principal{ID: "alice"}, notify.Filter{Resources: []string{"test://x"}})
	a.notify(abi.NotifyResourceUpdated, "test://x")
	if got := waitEvents(t, s); !slices.Equal(got, []string{"resources/updated test://x"}) {
		t.Errorf("b after a joined: %q", got)
	}
}
