package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// TestWarmRestart: a restart over an unchanged directory and a warm cache
// directory compiles and instantiates nothing (the plugins start asleep
// from the metadata cache) and serves; a corrupt metadata entry is
// discarded and rebuilt by compiling and describing the file again.
func TestWarmRestart(t *testing.T) {
	ctx := context.Background()
	cache, dir := t.TempDir(), t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", "good.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, dir, "good.wasm", good)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "good.wasm"), old, old)
	s := config.DefaultPlugin()
	s.Limits.SleepAfter = time.Hour
	cfg := &config.Config{Plugin: map[string]config.Plugin{"good": s}}
	// boot starts a server over dir and cache and returns its runtime's
	// compiles and the plugin's state once it is ready.
	boot := func(then func(r *Registry)) int64 {
		t.Helper()
		rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: cache, MetaDir: filepath.Join(cache, "meta")})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		r, err := New(Options{Dir: dir, Loader: WasmLoader(rt), Config: cfg, Debounce: 10 * time.Millisecond, Rescan: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		if err := r.Load(ctx, time.Minute); err != nil || !r.Ready() {
			t.Fatalf("load: %v, ready %v", err, r.Ready())
		}
		n := rt.Compiles()
		if then != nil {
			then(r)
		}
		return n
	}
	if n := boot(nil); n != 1 {
		t.Fatalf("a cold start compiled %d times, want 1", n)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "meta", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("%d metadata entries after a cold start, want 1", len(entries))
	}
	n := boot(func(r *Registry) {
		if got := fileState(r, "good.wasm"); got.State != StateServing || got.Life != plugin.LifeSleeping {
			t.Errorf("after a warm start good.wasm is %s/%s, want serving and sleeping", got.State, got.Life)
		}
		if s, err := read(r.Catalog(), "good://hello"); err != nil || s == "" {
			t.Errorf("read after a warm start = %q, %v", s, err)
		}
	})
	if n != 0 {
		t.Errorf("a warm start compiled %d times, want 0", n)
	}

	// A manifest this corral accepts, for the entries of the formats
	// before (1: one JSON object holding it; 2: a JSON header line, then
	// it) and of another key; the entry's own key, for a broken one.
	manifest := json.RawMessage(`{"abi":1,"name":"good","schemes":["good"]}`)
	built, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	key, _, _ := bytes.Cut(built, []byte("\n"))
	for name, junk := range map[string][]byte{
		"truncated":   []byte(`{"format":3,"dig`),
		"no manifest": append(bytes.Clone(key), "\n4"...),
		"bad minor":   append(append(bytes.Clone(key), "\nfour\n"...), manifest...),
		"other file":  append(mustJSON(t, map[string]any{"format": 3, "digest": "00"}), append([]byte("\n4\n"), manifest...)...),
		"format 2":    append(mustJSON(t, map[string]any{"format": 2, "digest": "00", "minor": 4}), append([]byte("\n"), manifest...)...),
		"format 1":    mustJSON(t, map[string]any{"format": 1, "digest": "00", "manifest": manifest}),
	} {
		if err := os.WriteFile(entries[0], junk, 0o600); err != nil {
			t.Fatal(err)
		}
		if n := boot(nil); n != 1 {
			t.Errorf("%s entry: the start compiled %d times, want 1 (the entry rebuilt)", name, n)
		}
		var e struct {
			Format int    `json:"format"`
			Digest string `json:"digest"`
		}
		b, _ := os.ReadFile(entries[0])
		lines := bytes.SplitN(b, []byte("\n"), 3)
		if len(lines) != 3 || json.Unmarshal(lines[0], &e) != nil || e.Format != 3 || len(e.Digest) != 64 ||
			string(lines[1]) != strconv.Itoa(int(abi.Minor)) || !json.Valid(lines[2]) || !bytes.Equal(b, built) {
			t.Errorf("%s entry: rebuilt as %s, want %s", name, b, built)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
