package registry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/plugin/plugintest"
)

// slowLoader compiles spec files; a spec whose name starts with "slow"
// compiles until release is closed, whatever its context says, as wazero
// does inside one function.
type slowLoader struct {
	nativeLoader
	mu      sync.Mutex
	release chan struct{} // guarded by mu
	started chan string   // receives the name of every slow compile that starts
	closed  atomic.Int64
}

func (l *slowLoader) Compile(ctx context.Context, path string, data []byte, probe config.Plugin) (Module, error) {
	var s spec
	if json.Unmarshal(data, &s) == nil && strings.HasPrefix(s.Name, "slow") {
		l.started <- s.Name
		l.mu.Lock()
		release := l.release
		l.mu.Unlock()
		<-release
		m, err := l.nativeLoader.Compile(ctx, path, data, probe)
		if err != nil {
			return nil, err
		}
		return closeCounter{m, &l.closed}, nil
	}
	return l.nativeLoader.Compile(ctx, path, data, probe)
}

type closeCounter struct {
	Module
	n *atomic.Int64
}

func (c closeCounter) Close(ctx context.Context) error { c.n.Add(1); return c.Module.Close(ctx) }

func newSlowLoader(t *testing.T) *slowLoader {
	l := &slowLoader{release: make(chan struct{}), started: make(chan string, 8)}
	t.Cleanup(func() { l.open() })
	return l
}

// open lets the slow compiles waiting, and those to come, finish.
func (l *slowLoader) open() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.release:
	default:
		close(l.release)
	}
}

// shut makes the slow compiles to come wait for open.
func (l *slowLoader) shut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release = make(chan struct{})
}

// settled writes spec files with an mtime past any debounce.
func settled(t *testing.T, dir string, specs ...spec) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	for _, s := range specs {
		writeSpec(t, dir, s.Name+".wasm", s)
		os.Chtimes(filepath.Join(dir, s.Name+".wasm"), old, old)
	}
}

// TestCompileAbandonedAtBudget: a compile that outlives the budget is
// abandoned and its file refused with the reason; the load (and
// readiness) does not wait for it, the other plugin serves, and the
// abandoned compile's module is closed once it finishes.
func TestCompileAbandonedAtBudget(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, spec{Name: "a", Scheme: "a", Text: "v1"}, spec{Name: "slow", Scheme: "slow", Text: "s"})
	l := newSlowLoader(t)
	r, err := New(Options{Dir: dir, Loader: l, Debounce: 10 * time.Millisecond, CompileTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if err := r.Load(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if !r.Ready() {
		t.Fatalf("not ready: %v", r.NotReady())
	}
	if s, err := read(r.Catalog(), "a://doc"); s != "v1" {
		t.Errorf("a = %q, %v", s, err)
	}
	st := fileState(r, "slow.wasm")
	if st.State != StateFailed || !strings.Contains(st.Error, "compile abandoned after 50ms (plugins.compile.timeout)") {
		t.Errorf("slow.wasm: %+v, want failed with the budget named", st)
	}
	l.open()
	eventually(t, "the abandoned compile's module closed", func() bool { return l.closed.Load() == 1 })
	if _, err := read(r.Catalog(), "slow://doc"); err == nil {
		t.Error("the abandoned plugin serves")
	}
}

// TestHotAddWhileRecompiling: while a serving plugin's new version
// compiles slowly, a plugin added later is served first, and the old
// version keeps serving until the new one is ready.
func TestHotAddWhileRecompiling(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, spec{Name: "slowpoke", Scheme: "slow", Text: "v1"})
	l := newSlowLoader(t)
	l.open() // the first version compiles at once
	r := startWith(t, Options{Dir: dir, Loader: l, Debounce: 30 * time.Millisecond, Rescan: -1,
		DrainGrace: 20 * time.Millisecond}, nil)
	<-l.started
	cat := r.Catalog()
	if s, _ := read(cat, "slow://doc"); s != "v1" {
		t.Fatalf("slow = %q", s)
	}

	l.shut() // the next slow compile blocks
	writeSpec(t, dir, "slowpoke.wasm", spec{Name: "slowpoke", Scheme: "slow", Text: "v2"})
	<-l.started // the new version is compiling
	writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "b1"})
	eventually(t, "b served while slowpoke v2 compiles", func() bool { s, _ := read(cat, "b://doc"); return s == "b1" })
	if s, _ := read(cat, "slow://doc"); s != "v1" {
		t.Errorf("slow = %q while v2 compiles, want v1 serving", s)
	}
	l.open()
	eventually(t, "slowpoke v2 served", func() bool { s, _ := read(cat, "slow://doc"); return s == "v2" })
}

// TestBombDroppedThenGoodPlugin: with the real runtime, a compile bomb
// dropped into a serving directory is refused from its shape, and a good
// plugin dropped after it is served, while the first keeps serving.
func TestBombDroppedThenGoodPlugin(t *testing.T) {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := t.TempDir()
	writeRaw(t, dir, "good.wasm", fixture("good"))
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "good.wasm"), old, old)
	r := startWith(t, Options{Dir: dir, Loader: WasmLoader(rt), Debounce: 30 * time.Millisecond, Rescan: -1,
		DrainGrace: 20 * time.Millisecond}, nil)

	writeRaw(t, dir, "bomb.wasm", plugintest.Bomb(80_000))
	writeRaw(t, dir, "caps.wasm", fixture("caps"))
	eventually(t, "caps served after the bomb", func() bool { return fileState(r, "caps.wasm").State == StateServing })
	st := fileState(r, "bomb.wasm")
	if st.State != StateFailed || !strings.Contains(st.Error, "blocks nested more than 1024 deep exceed plugins.compile.maxNesting") {
		t.Errorf("bomb.wasm: %+v, want refused for its nesting", st)
	}
	if st := fileState(r, "good.wasm"); st.State != StateServing {
		t.Errorf("good.wasm: %+v", st)
	}
	if !r.Ready() {
		t.Errorf("not ready: %v", r.NotReady())
	}
}

// TestCompilePoolBoundsAbandoned: an abandoned compile gives its worker
// back while fewer than the pool's size of abandoned ones still run;
// past that it keeps the worker, so at most twice the pool's size of
// compiles burn CPU. Both are given back when the compiles end.
func TestCompilePoolBoundsAbandoned(t *testing.T) {
	l := newSlowLoader(t)
	p := newCompilePool(1, 10*time.Millisecond)
	slow, _ := json.Marshal(spec{Name: "slow", Scheme: "slow"})
	ctx := context.Background()
	for i, want := range []struct{ slots, abandoned int }{{0, 1}, {1, 1}} {
		if _, err := p.compile(ctx, nil, l, "slow.wasm", slow, config.Plugin{}); !errors.Is(err, errBudget) {
			t.Fatalf("compile %d: %v, want the budget", i, err)
		}
		<-l.started
		if got := (struct{ slots, abandoned int }{len(p.slots), len(p.abandoned)}); got != want {
			t.Errorf("after abandoned compile %d: %d workers and %d abandoned taken, want %d and %d", i, got.slots, got.abandoned, want.slots, want.abandoned)
		}
	}
	l.open()
	eventually(t, "workers given back", func() bool { return len(p.slots) == 0 && len(p.abandoned) == 0 })
	if n := l.closed.Load(); n != 2 {
		t.Errorf("%d abandoned modules closed, want 2", n)
	}
}
