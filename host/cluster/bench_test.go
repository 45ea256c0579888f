package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/tasks"
)

// BenchmarkKV compares a plugin's kv get and set on JetStream (a server in
// this process, file storage) with the local stores: in memory, and the
// append-only log of plugins.dataDir. Values are 100 bytes, over 100 keys.
func BenchmarkKV(b *testing.B) {
	n := startServer(b)
	stores := []struct {
		name string
		open func(b *testing.B) plugin.Store
	}{
		{"jetstream", func(b *testing.B) plugin.Store {
			c := NewConn(Options{Cluster: clusterOf(n.url(), "bench")})
			if err := c.Connect(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Stop(b.Context()) })
			s, _ := c.OpenStore("bench", 1<<30)
			return s
		}},
		{"memory", func(*testing.B) plugin.Store { return plugin.NewMemoryStore(1 << 30) }},
		{"file", func(b *testing.B) plugin.Store {
			s, err := plugin.OpenFileStore(filepath.Join(b.TempDir(), "kv.log"), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	value := make([]byte, 100)
	for _, st := range stores {
		s := st.open(b)
		for i := range 100 {
			if err := s.Set(fmt.Sprint("key", i), value); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("set/"+st.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := s.Set(fmt.Sprint("key", i%100), value); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get/"+st.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.Get(fmt.Sprint("key", i%100)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCrossReplicaNotify measures how long a plugin's notify call
// takes to reach listeners: 1,000 subscriptions spread over three replicas
// on one NATS (in this process) against 1,000 on one replica alone. Each
// iteration publishes one resource update on replica 1 and waits until
// every subscription has it; p50 and p99 of that time are reported.
func BenchmarkCrossReplicaNotify(b *testing.B) {
	const listeners = 1000
	n := startServer(b)
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			var hubs []*notify.Hub
			for r := range replicas {
				hub, stop := benchReplica(b, n.url(), fmt.Sprint("r", r))
				defer stop()
				hubs = append(hubs, hub)
			}
			var subs []*notify.Subscription
			for i := range listeners {
				subs = append(subs, hubs[i%replicas].Subscribe(abi.Principal{ID: "p"}, notify.Filter{Resources: []string{"test://x"}}))
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				hubs[0].Notify("p", abi.NotifyResourceUpdated, "test://x")
				for _, s := range subs {
					<-s.Ready()
					s.Take()
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// benchReplica is a replica's hub on the bus, connected and subscribed.
func benchReplica(b *testing.B, url, id string) (*notify.Hub, func()) {
	var hub *notify.Hub
	c := NewConn(Options{Cluster: clusterOf(url, id)})
	bus := NewBus(c, func(m notify.Message) bool { return hub.Receive(m) })
	hub = notify.New(notify.Options{Bus: bus})
	if err := c.Connect(); err != nil {
		b.Fatal(err)
	}
	if err := bus.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		b.Fatal(err)
	}
	return hub, func() { bus.Stop(b.Context()); c.Stop(b.Context()); hub.Close() }
}

// BenchmarkTask measures the cross-replica paths of a task, two replicas
// on a server in this process: a tasks/get on replica 2 of a task working
// on replica 1 (its record and its runner's lease), of a completed task
// whose 2 MiB result is in the Object Store, and an answer forwarded from
// replica 2 to the runner (read, request/reply, the runner's read).
func BenchmarkTask(b *testing.B) {
	n := startServer(b)
	r1 := startTaskReplica(b, n.url(), "r1", 0)
	r2 := startTaskReplica(b, n.url(), "r2", 0)
	ctx := b.Context()
	asks, err := r1.mgr.Start("alice", "p", askingWork)
	if err != nil {
		b.Fatal(err)
	}
	waitTask(b, r2, "alice", asks.ID, tasks.InputRequired)
	result, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 2<<20)}}})
	large, err := r1.mgr.Start("alice", "p", func(context.Context, *tasks.Resume, func(string)) tasks.Outcome { return tasks.Outcome{Result: result} })
	if err != nil {
		b.Fatal(err)
	}
	waitTask(b, r2, "alice", large.ID, tasks.Completed)
	b.Run("get/unfinished", func(b *testing.B) {
		for b.Loop() {
			if _, err := r2.mgr.Get(ctx, "alice", asks.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get/2MiB", func(b *testing.B) {
		for b.Loop() {
			if _, err := r2.mgr.Get(ctx, "alice", large.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update/forwarded", func(b *testing.B) {
		none := map[string]json.RawMessage{"not-asked": json.RawMessage(`1`)}
		for b.Loop() {
			if err := r2.mgr.Update(ctx, "alice", asks.ID, none); err != nil {
				b.Fatal(err)
			}
		}
	})
}
