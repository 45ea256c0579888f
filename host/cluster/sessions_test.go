package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/corral-mcp/corral/host/session"
)

func stores(t *testing.T, url string, max, perClient, n int) []*SessionStore {
	t.Helper()
	var out []*SessionStore
	for range n {
		_, js := connect(t, url)
		s := NewSessionStore(js, SessionOptions{Name: "t", MaxSessions: max, MaxSessionsPerClient: perClient})
		t.Cleanup(s.Close)
		out = append(out, s)
	}
	for _, s := range out {
		eventually(t, "bucket bound", func() bool { _, err := s.kvOf(); return err == nil })
	}
	return out
}

// TestSessionStoreAcrossReplicas: a record created through one replica is
// read, changed and deleted through the others; a watch on the first
// sees the change and ends with the delete.
func TestSessionStoreAcrossReplicas(t *testing.T) {
	ns := natsServer(t, t.TempDir(), -1)
	s := stores(t, ns.ClientURL(), 16, 4, 3)
	ctx := context.Background()
	if _, err := s[0].Create(ctx, "id1", session.Record{Client: "principal:a", Capabilities: []byte(`{"elicitation":{}}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := s[1].Get(ctx, "id1")
	if err != nil || got.Client != "principal:a" || string(got.Capabilities) != `{"elicitation":{}}` || got.Rev == 0 {
		t.Fatalf("Get through replica 2 = %+v, %v", got, err)
	}
	w, err := s[0].Watch(ctx, "id1")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s[2].Update(ctx, "id1", func(r *session.Record) {
		r.LogLevel = "debug"
		r.Resources = []string{"test://x"}
		r.Client = "principal:mallory"
	})
	if err != nil || rec.Rev <= got.Rev || rec.Client != "principal:a" {
		t.Fatalf("Update through replica 3 = %+v, %v", rec, err)
	}
	if seen := <-w; !seen.Equal(rec) || seen.Rev != rec.Rev {
		t.Errorf("replica 1's watch saw %+v, want %+v", seen, rec)
	}
	if err := s[1].Delete(ctx, "id1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w; ok {
		t.Error("the watch outlived the session")
	}
	for i, st := range s {
		if _, err := st.Get(ctx, "id1"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("replica %d after Delete: %v", i+1, err)
		}
	}
	if err := s[0].Delete(ctx, "id1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := s[0].Update(ctx, "id1", func(*session.Record) {}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Update after Delete: %v", err)
	}
}

// TestSessionStoreQuotas: the per-client quota holds across replicas (the
// client's least recently used session ends, wherever it was opened), and
// the cluster-wide bound refuses once every replica has seen the
// sessions.
func TestSessionStoreQuotas(t *testing.T) {
	ns := natsServer(t, t.TempDir(), -1)
	s := stores(t, ns.ClientURL(), 4, 2, 2)
	ctx := context.Background()
	mustCreate := func(st *SessionStore, id, client string) []string {
		t.Helper()
		ended, err := st.Create(ctx, id, session.Record{Client: client})
		if err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
		return ended
	}
	mustCreate(s[0], "a1", "a")
	mustCreate(s[1], "a2", "a")
	if ended := mustCreate(s[0], "a3", "a"); !slices.Equal(ended, []string{"a1"}) {
		t.Errorf("a over its quota ended %v, want [a1]", ended)
	}
	if _, err := s[1].Get(ctx, "a1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("evicted a1 through replica 2: %v", err)
	}
	mustCreate(s[1], "b1", "b")
	mustCreate(s[0], "b2", "b")
	for _, st := range s {
		eventually(t, "every replica sees 4 sessions", func() bool { return st.Stats().Open == 4 })
	}
	for i, st := range s {
		if _, err := st.Create(ctx, fmt.Sprint("c", i), session.Record{Client: "c"}); !errors.Is(err, session.ErrFull) {
			t.Errorf("replica %d, cluster full: %v, want ErrFull", i+1, err)
		}
	}
	if err := s[0].Delete(ctx, "b1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica 2 sees the slot given back", func() bool { return s[1].Stats().Open == 3 })
	mustCreate(s[1], "c1", "c")
}

// TestSessionStoreConcurrentUpdates: changes made at once through two
// replicas are all kept (compare-and-swap, retried).
func TestSessionStoreConcurrentUpdates(t *testing.T) {
	ns := natsServer(t, t.TempDir(), -1)
	s := stores(t, ns.ClientURL(), 16, 4, 2)
	ctx := context.Background()
	if _, err := s[0].Create(ctx, "id", session.Record{Client: "a"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := s[i%2].Update(ctx, "id", func(r *session.Record) {
				r.Resources = append(r.Resources, fmt.Sprintf("test://%02d", i))
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	rec, err := s[1].Get(ctx, "id")
	if err != nil || len(rec.Resources) != 20 {
		t.Errorf("after 20 concurrent updates: %d resources, %v", len(rec.Resources), err)
	}
}

// TestSessionStoreServerRestart: with the NATS server down, operations
// fail (the transport answers 503) without hanging past opTimeout; once
// it is back on its store, the records are still there, the replicas
// reconnect, and a watch set up after the restart sees changes.
func TestSessionStoreServerRestart(t *testing.T) {
	dir := t.TempDir()
	ns := natsServer(t, dir, -1)
	port := ns.Addr().(*net.TCPAddr).Port
	s := stores(t, ns.ClientURL(), 16, 4, 2)
	ctx := context.Background()
	if _, err := s[0].Create(ctx, "id", session.Record{Client: "a", LogLevel: "info"}); err != nil {
		t.Fatal(err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	if _, err := s[1].Get(ctx, "id"); err == nil || errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get with NATS down: %v, want a store error", err)
	}
	natsServer(t, dir, port)
	eventually(t, "replica 2 reads the record after the restart", func() bool {
		rec, err := s[1].Get(ctx, "id")
		return err == nil && rec.LogLevel == "info"
	})
	w, err := s[0].Watch(ctx, "id")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s[1].Update(ctx, "id", func(r *session.Record) { r.LogLevel = "error" }); err != nil {
		t.Fatal(err)
	}
	if rec := <-w; rec.LogLevel != "error" {
		t.Errorf("watch after the restart saw %+v", rec)
	}
}

// TestSessionStoreStartsWithoutNATS: a store made while NATS is down
// fails its operations, then binds its bucket once NATS comes up.
func TestSessionStoreStartsWithoutNATS(t *testing.T) {
	dir := t.TempDir()
	probe := natsServer(t, dir, -1)
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Shutdown()
	probe.WaitForShutdown()
	_, js := connect(t, fmt.Sprintf("nats://127.0.0.1:%d", port))
	st := NewSessionStore(js, SessionOptions{Name: "t", MaxSessions: 4, MaxSessionsPerClient: 4})
	t.Cleanup(st.Close)
	if _, err := st.Create(context.Background(), "id", session.Record{Client: "a"}); err == nil {
		t.Fatal("Create with NATS down succeeded")
	}
	natsServer(t, dir, port)
	eventually(t, "the store binds once NATS is up", func() bool {
		_, err := st.Create(context.Background(), "id", session.Record{Client: "a"})
		return err == nil
	})
}

// BenchmarkSessionGet: what every 2025-11-25 request pays to read its
// session's record, in one process (session.Memory) and in a cluster
// (SessionStore on a NATS server in this process, over loopback).
func BenchmarkSessionGet(b *testing.B) {
	ctx := context.Background()
	ns := natsServer(b, b.TempDir(), -1)
	_, js := connect(b, ns.ClientURL())
	kv := NewSessionStore(js, SessionOptions{Name: "b", MaxSessions: 16, MaxSessionsPerClient: 16})
	b.Cleanup(kv.Close)
	eventually(b, "bucket bound", func() bool { _, err := kv.kvOf(); return err == nil })
	for _, st := range []struct {
		name  string
		store session.Store
	}{{"memory", session.NewMemory(16, 16)}, {"jetstream", kv}} {
		if _, err := st.store.Create(ctx, "id", session.Record{Client: "a", Capabilities: []byte(`{"elicitation":{}}`)}); err != nil {
			b.Fatal(err)
		}
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.store.Get(ctx, "id"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
