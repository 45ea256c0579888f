package cluster

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// files returns the names and contents of dir's files.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a temporary file the mirror renamed meanwhile
		}
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func startMirror(t *testing.T, c *Conn, dir string) *Mirror {
	t.Helper()
	m := NewMirror(c, dir)
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	return m
}

// TestMirror: every replica's directory follows the cluster's plugin
// bucket: what is there at the start (a stale file removed), then each
// publish, replacement and unpublish; a server restart on the same port
// and store keeps the bucket and the mirrors follow on.
func TestMirror(t *testing.T) {
	n := startServer(t)
	pub := startConn(t, n.url(), "cli")
	eventually(t, "connected", func() bool { return pub.Status().Connected })
	if err := pub.Publish(t.Context(), "alpha", []byte("alpha v1")); err != nil {
		t.Fatal(err)
	}
	a, b := startConn(t, n.url(), "a"), startConn(t, n.url(), "b")
	eventually(t, "connected", func() bool { return a.Status().Connected && b.Status().Connected })
	da, db := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(da, "stale.wasm"), []byte("not in the bucket"), 0o644)
	startMirror(t, a, da)
	startMirror(t, b, db)
	for _, d := range []string{da, db} {
		if got := files(t, d); len(got) != 1 || got["alpha.wasm"] != "alpha v1" {
			t.Errorf("after Start %s holds %q, want alpha.wasm only", d, got)
		}
	}
	same := func(what string, want map[string]string) {
		t.Helper()
		eventually(t, what, func() bool {
			ga, gb := files(t, da), files(t, db)
			return maps.Equal(ga, want) && maps.Equal(gb, want)
		})
	}
	// An object put in the bucket by other means, named like no plugin,
	// never reaches a mirror (beta, put after it, does).
	bucket, err := pub.pluginBucket(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.txt", "../escape.wasm", ".hidden.wasm"} {
		if _, err := bucket.PutBytes(t.Context(), name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Publish(t.Context(), "beta", []byte("beta v1")); err != nil {
		t.Fatal(err)
	}
	same("beta published", map[string]string{"alpha.wasm": "alpha v1", "beta.wasm": "beta v1"})
	if err := pub.Publish(t.Context(), "alpha", []byte("alpha v2")); err != nil {
		t.Fatal(err)
	}
	same("alpha replaced", map[string]string{"alpha.wasm": "alpha v2", "beta.wasm": "beta v1"})
	if err := pub.Unpublish(t.Context(), "beta"); err != nil {
		t.Fatal(err)
	}
	same("beta unpublished", map[string]string{"alpha.wasm": "alpha v2"})
	if err := pub.Unpublish(t.Context(), "beta"); !errors.Is(err, ErrNotPublished) {
		t.Errorf("unpublishing it again: %v, want ErrNotPublished", err)
	}
	for _, bad := range []string{"../x", "Upper", ""} {
		if err := pub.Publish(t.Context(), bad, []byte("x")); err == nil {
			t.Errorf("published %q", bad)
		}
	}

	n.restart()
	eventually(t, "reconnected", func() bool { return pub.Status().Connected })
	if err := pub.Publish(t.Context(), "gamma", []byte("gamma v1")); err != nil {
		t.Fatal(err)
	}
	same("gamma published after the restart", map[string]string{"alpha.wasm": "alpha v2", "gamma.wasm": "gamma v1"})
}

// TestMirrorJoinsLater: a replica started while NATS is down starts with
// an empty directory and fills it when NATS comes up.
func TestMirrorJoinsLater(t *testing.T) {
	n := startServer(t)
	pub := startConn(t, n.url(), "cli")
	eventually(t, "connected", func() bool { return pub.Status().Connected })
	if err := pub.Publish(t.Context(), "alpha", []byte("alpha v1")); err != nil {
		t.Fatal(err)
	}
	n.stop()
	a := startConn(t, n.url(), "a")
	d := t.TempDir()
	m := startMirror(t, a, d)
	if got := files(t, d); len(got) != 0 {
		t.Errorf("without NATS the mirror holds %q", got)
	}
	n.start()
	<-m.Synced()
	if got := files(t, d); !maps.Equal(got, map[string]string{"alpha.wasm": "alpha v1"}) {
		t.Errorf("after NATS came up: %q", got)
	}
}

// TestMirrorSignatures: a plugin's signatures are published and mirrored
// beside its file, replaced or removed with it, so a replica's trust
// policy checks a published plugin like a directory drop.
func TestMirrorSignatures(t *testing.T) {
	n := startServer(t)
	pub := startConn(t, n.url(), "cli")
	a := startConn(t, n.url(), "a")
	eventually(t, "connected", func() bool { return pub.Status().Connected && a.Status().Connected })
	dir := t.TempDir()
	startMirror(t, a, dir)
	publish := func(module string, sigs map[string][]byte) {
		t.Helper()
		if err := pub.PublishSignatures(t.Context(), "alpha", sigs); err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(t.Context(), "alpha", []byte(module)); err != nil {
			t.Fatal(err)
		}
	}
	publish("alpha v1", map[string][]byte{".minisig": []byte("sig v1"), ".sigstore.json": []byte("{}")})
	want := map[string]string{"alpha.wasm": "alpha v1", "alpha.wasm.minisig": "sig v1", "alpha.wasm.sigstore.json": "{}"}
	eventually(t, "signed alpha mirrored", func() bool { return maps.Equal(files(t, dir), want) })
	publish("alpha v2", map[string][]byte{".minisig": []byte("sig v2")})
	want = map[string]string{"alpha.wasm": "alpha v2", "alpha.wasm.minisig": "sig v2"}
	eventually(t, "alpha v2 and its one signature mirrored", func() bool { return maps.Equal(files(t, dir), want) })
	if err := pub.Unpublish(t.Context(), "alpha"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alpha and its signature gone", func() bool { return len(files(t, dir)) == 0 })
}
