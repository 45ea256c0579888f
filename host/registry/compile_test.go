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

func (l *slowLoader) Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error) {
	var s spec
	if json.Unmarshal(data, &s) == nil && strings.HasPrefix(s.Name, "slow") {
		l.started <- s.Name
		l.mu.Lock()
		release := l.release
		l.mu.Unlock()
		<-release
		m, err := l.nativeLoader.Compile(ctx, path, data, digest, probe)
		if err != nil {
			return nil, err
		}
		return closeCounter{m, &l.closed}, nil
	}
	return l.nativeLoader.Compile(ctx, path, data, digest, probe)
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
		if _, err := p.compile(ctx, nil, l, "slow.wasm", slow, "", config.Plugin{}, func() {}); !errors.Is(err, errBudget) {
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

// waitsUnsettled reports whether the file compiled and waits to be
// settled (its version is fresh, not yet serving or refused).
func waitsUnsettled(r *Registry, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	path := filepath.Join(r.opts.Dir, name)
	return r.fresh[path] != nil || r.waiting[path] != nil
}

// TestBoundSettlesDuringSlowCompile: while a new file's compile is
// blocked, a plugin claiming the same scheme settles at once only if
// it is bound and the slow file cannot be (an unbound file can never beat
// a bound one); otherwise it waits, and never starts before the slow
// file's claims are known. The outcome after the slow compile is that of
// the bindings alone.
func TestBoundSettlesDuringSlowCompile(t *testing.T) {
	slow := spec{Name: "slow", Scheme: "x", Text: "slow"}
	b := spec{Name: "b", Scheme: "x", Text: "b"}
	type binding int
	const (
		none binding = iota
		byFile
		byDigest
	)
	for _, tc := range []struct {
		name          string
		slow, b       binding
		early         bool   // b serves and the registry is ready while slow compiles
		after         string // x://doc once slow compiled: "" for none
		instancesWait int64  // plugins started while slow compiles
	}{
		{"bound by file vs unbound", none, byFile, true, "b", 1},
		{"bound by digest vs unbound", none, byDigest, true, "b", 1},
		{"unbound vs unbound", none, none, false, "", 0},
		{"unbound vs bound by file", byFile, none, false, "slow", 0},
		{"bound vs bound by digest", byDigest, byFile, false, "", 0},
		{"bound vs bound by file", byFile, byDigest, false, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			settled(t, dir, slow, b)
			bind := func(how binding, s spec) config.Plugin {
				p := config.DefaultPlugin()
				switch how {
				case byFile:
					p.File = filepath.Join(dir, s.Name+".wasm")
				case byDigest:
					p.SHA256 = digestOf(specBytes(s))
				}
				return p
			}
			cfg := &config.Config{Plugin: map[string]config.Plugin{"slow": bind(tc.slow, slow), "b": bind(tc.b, b)}}
			l := newSlowLoader(t)
			r := run(t, Options{Dir: dir, Loader: l, Config: cfg, Debounce: 10 * time.Millisecond, Rescan: -1,
				DrainGrace: 20 * time.Millisecond}, nil)
			<-l.started
			if tc.early {
				eventually(t, "b served while slow compiles", func() bool { s, _ := read(r.Catalog(), "x://doc"); return s == "b" })
				if !r.Ready() {
					t.Errorf("not ready while only an unbound file compiles: %v", r.NotReady())
				}
			} else {
				eventually(t, "b compiled", func() bool { return waitsUnsettled(r, "b.wasm") })
				if s, err := read(r.Catalog(), "x://doc"); err == nil {
					t.Errorf("x://doc = %q while slow compiles, want nothing served", s)
				}
				if r.Ready() {
					t.Error("ready while b waits for slow")
				}
			}
			if n := l.instances.Load(); n != tc.instancesWait {
				t.Errorf("%d plugins started while slow compiles, want %d", n, tc.instancesWait)
			}
			l.open()
			eventually(t, "slow settled", func() bool {
				s := fileState(r, "slow.wasm").State
				return s == StateServing || s == StateRefused
			})
			if s, _ := read(r.Catalog(), "x://doc"); s != tc.after {
				t.Errorf("x://doc = %q after slow compiled, want %q\n%+v", s, tc.after, r.Status())
			}
			if !r.Ready() {
				t.Errorf("not ready after every compile: %v", r.NotReady())
			}
		})
	}
}

// TestHotAddDuringUnboundSlowCompile: from Load (as at start-up) onwards,
// an unbound file compiling slowly holds neither readiness nor a bound
// plugin, at start or hot added; an unbound plugin added meanwhile waits
// for the slow file's claims.
func TestHotAddDuringUnboundSlowCompile(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, spec{Name: "slow", Scheme: "s", Text: "slow"}, spec{Name: "a", Scheme: "a", Text: "a"})
	bound := func(name string) config.Plugin {
		p := config.DefaultPlugin()
		p.File = filepath.Join(dir, name)
		return p
	}
	cfg := &config.Config{Plugin: map[string]config.Plugin{"a": bound("a.wasm"), "b": bound("b.wasm")}}
	l := newSlowLoader(t)
	r, err := New(Options{Dir: dir, Loader: l, Config: cfg, Debounce: 10 * time.Millisecond, Rescan: -1,
		DrainGrace: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		l.open()
		cancel()
		<-done
		r.Close(context.Background())
	})
	go func() {
		defer close(done)
		if err := r.Load(ctx, time.Minute); err != nil {
			t.Error(err)
		}
		r.Run(ctx)
	}()
	<-l.started
	eventually(t, "ready, a served", func() bool { s, _ := read(r.Catalog(), "a://doc"); return r.Ready() && s == "a" })

	writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "b"})
	eventually(t, "hot-added bound b served", func() bool { s, _ := read(r.Catalog(), "b://doc"); return s == "b" })
	writeSpec(t, dir, "u.wasm", spec{Name: "u", Scheme: "u", Text: "u"})
	eventually(t, "u compiled", func() bool { return waitsUnsettled(r, "u.wasm") })
	if s, err := read(r.Catalog(), "u://doc"); err == nil {
		t.Errorf("unbound u serves (%q) while slow compiles", s)
	}
	if st := fileState(r, "u.wasm"); st.State != StatePending {
		t.Errorf("u.wasm: %+v, want pending", st)
	}
	l.open()
	eventually(t, "u and slow served", func() bool {
		u, _ := read(r.Catalog(), "u://doc")
		s, _ := read(r.Catalog(), "s://doc")
		return u == "u" && s == "slow"
	})
}
