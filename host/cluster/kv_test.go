package cluster

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/plugin"
)

// stream returns the JetStream stream behind plugin p's bucket.
func bucketStream(t *testing.T, c *Conn, p string) *jetstream.StreamInfo {
	t.Helper()
	st, err := c.js.Stream(t.Context(), "KV_test-kv-"+p)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func openStore(t *testing.T, c *Conn, p string, quota int64) plugin.Store {
	t.Helper()
	s, err := c.OpenStore(p, quota)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKVShared: a value written through one replica is read through
// another; a delete purges the key (no tombstone left in the stream); a
// plugin's key may be any bytes; two plugins do not share keys.
func TestKVShared(t *testing.T) {
	n := startServer(t)
	a, b := startConn(t, n.url(), "a"), startConn(t, n.url(), "b")
	eventually(t, "connected", func() bool { return a.Status().Connected && b.Status().Connected })
	sa, sb, other := openStore(t, a, "p", 1<<20), openStore(t, b, "p", 1<<20), openStore(t, b, "q", 1<<20)

	for _, key := range []string{"k", "a key/with.dots and spaces*>", "\x00\xff"} {
		if err := sa.Set(key, []byte("v:"+key)); err != nil {
			t.Fatalf("set %q: %v", key, err)
		}
		if v, err := sb.Get(key); err != nil || string(v) != "v:"+key {
			t.Errorf("get %q on b = %q, %v", key, v, err)
		}
		if _, err := other.Get(key); !errors.Is(err, plugin.ErrNotFound) {
			t.Errorf("plugin q reads p's %q: %v", key, err)
		}
	}
	if err := sb.Set("k", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if v, _ := sa.Get("k"); string(v) != "new" {
		t.Errorf("a after b's replace: %q", v)
	}
	for _, key := range []string{"k", "a key/with.dots and spaces*>", "\x00\xff", "never set"} {
		if err := sa.Delete(key); err != nil {
			t.Fatalf("delete %q: %v", key, err)
		}
		if _, err := sb.Get(key); !errors.Is(err, plugin.ErrNotFound) {
			t.Errorf("get %q on b after the delete: %v", key, err)
		}
	}
	if info := bucketStream(t, a, "p"); info.State.Msgs != 0 || info.State.Bytes != 0 {
		t.Errorf("after deleting every key the bucket holds %d messages, %d bytes; want none (purged)", info.State.Msgs, info.State.Bytes)
	}
}

// TestKVQuota: the quota holds across replicas (the server refuses what
// would take the bucket over it); replacing a value within the quota
// works; an entry larger than the quota on its own is refused without a
// round trip; a value over the server's payload limit is too large.
func TestKVQuota(t *testing.T) {
	n := startServerWith(t, 64<<10)
	a, b := startConn(t, n.url(), "a"), startConn(t, n.url(), "b")
	eventually(t, "connected", func() bool { return a.Status().Connected && b.Status().Connected })
	const quota = 1000
	sa, sb := openStore(t, a, "p", quota), openStore(t, b, "p", quota)
	v := bytes.Repeat([]byte("x"), 600)
	if err := sa.Set("one", v); err != nil {
		t.Fatal(err)
	}
	if err := sb.Set("two", v); !errors.Is(err, plugin.ErrQuota) {
		t.Errorf("b over the quota a used: %v, want ErrQuota", err)
	}
	if err := sb.Set("one", v); err != nil {
		t.Errorf("b replacing a's value with one as big: %v", err)
	}
	if err := sa.Delete("one"); err != nil {
		t.Fatal(err)
	}
	if err := sb.Set("two", v); err != nil {
		t.Errorf("b once a's value is gone: %v", err)
	}
	if err := sa.Set("big", bytes.Repeat([]byte("x"), quota)); !errors.Is(err, plugin.ErrQuota) {
		t.Errorf("an entry over the quota alone: %v, want ErrQuota", err)
	}
	big := openStore(t, a, "big", 1<<20)
	if err := big.Set("k", bytes.Repeat([]byte("x"), 64<<10)); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("a value over max_payload: %v, want ErrTooLarge", err)
	}
	if err := big.Set("k", bytes.Repeat([]byte("x"), 60<<10)); err != nil {
		t.Errorf("a value under max_payload: %v", err)
	}
}

// TestKVOutage: while NATS is away kv calls fail at once with
// ErrUnavailable (a plugin using kv still loads); after the server comes
// back on its port and store, the values written before are there.
func TestKVOutage(t *testing.T) {
	n := startServer(t)
	n.stop()
	a := startConn(t, n.url(), "a")
	s := openStore(t, a, "p", 1<<20)
	if _, err := s.Get("k"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("get before NATS ever came up: %v, want ErrUnavailable", err)
	}
	n.start()
	eventually(t, "connected", func() bool { return a.Status().Connected })
	if err := s.Set("k", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	n.stop()
	eventually(t, "disconnected", func() bool { return !a.Status().Connected })
	for name, op := range map[string]func() error{
		"get":    func() error { _, err := s.Get("k"); return err },
		"set":    func() error { return s.Set("k", []byte("lost")) },
		"delete": func() error { return s.Delete("k") },
	} {
		if err := op(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s while NATS is away: %v, want ErrUnavailable", name, err)
		}
	}
	n.restart()
	eventually(t, "reconnected", func() bool { return a.Status().Connected })
	var got []byte
	eventually(t, "the value back", func() bool {
		v, err := s.Get("k")
		got = v
		return err == nil
	})
	if string(got) != "kept" {
		t.Errorf("after the restart: %q, want kept", got)
	}
	if !strings.HasPrefix(a.Status().Server, "nats://") {
		t.Errorf("status server %q", a.Status().Server)
	}
}
