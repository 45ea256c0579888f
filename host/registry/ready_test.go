package registry

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// hostFailLoader fails every compile for a host reason while failing is
// set, and compiles spec files otherwise.
type hostFailLoader struct {
	nativeLoader
	failing atomic.Bool
}

func (l *hostFailLoader) Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error) {
	if l.failing.Load() {
		return nil, fmt.Errorf("%w: the disk is on fire", plugin.ErrHost)
	}
	return l.nativeLoader.Compile(ctx, path, data, digest, probe)
}

// TestNotReadyWhileHostFails: a file failing for a host reason keeps the
// registry not ready, with the file in the reason, and is retried without
// changing; a file failing for its own reason does not hold readiness.
func TestNotReadyWhileHostFails(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "1", Scheme: "a", Text: "v1"})
	writeRaw(t, dir, "junk.wasm", []byte("not a plugin"))
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{"a.wasm", "junk.wasm"} {
		os.Chtimes(filepath.Join(dir, f), old, old)
	}
	l := &hostFailLoader{}
	l.failing.Store(true)
	r, err := New(Options{Dir: dir, Loader: l, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	ctx := context.Background()
	if err := r.Load(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.NotReady(); err == nil || !strings.Contains(err.Error(), "a.wasm") || !strings.Contains(err.Error(), "disk is on fire") {
		t.Fatalf("NotReady() = %v, want the host failure of a.wasm", err)
	}
	if r.Ready() || r.Status().Ready {
		t.Error("ready while a plugin fails for a host reason")
	}

	l.failing.Store(false)
	if _, err := r.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := read(r.Catalog(), "a://doc"); s != "v1" {
		t.Fatalf("a = %q, %v after the host recovered", s, err)
	}
	if err := r.NotReady(); err != nil {
		t.Errorf("NotReady() = %v once only junk.wasm (its own fault) fails", err)
	}
	if st := fileState(r, "junk.wasm"); st.State != StateFailed {
		t.Errorf("junk.wasm is %q, want failed", st.State)
	}
}

// TestCorruptCacheStillServes: with every compilation cache entry
// truncated, a restart serves the plugin again (the entry is discarded
// and recompiled) and is ready.
func TestCorruptCacheStillServes(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", "good.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, dir, "good.wasm", good)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "good.wasm"), old, old)
	serve := func(what string) {
		t.Helper()
		rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		r, err := New(Options{Dir: dir, Loader: WasmLoader(rt), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		if err := r.Load(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		if n := len(r.Catalog().Current().Providers()); n != 1 || !r.Ready() {
			t.Fatalf("%s: serving %d plugins, ready %v: %+v", what, n, r.Ready(), r.Status())
		}
	}
	serve("cold")
	n := 0
	err = filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n++
		return os.Truncate(path, fi.Size()/2)
	})
	if err != nil || n == 0 {
		t.Fatalf("truncated %d cache entries: %v", n, err)
	}
	serve("with every cache entry truncated")
}
