package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/config"
)

// spec is the content of a native test plugin "file": JSON naming the
// plugin, its scheme and the text of its one resource, <scheme>://doc.
type spec struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Scheme  string `json:"scheme"`
	Text    string `json:"text"`
	// Caps and Required are the manifest's capabilities and required ones.
	Caps     []string `json:"caps,omitempty"`
	Required []string `json:"required,omitempty"`
}

// nativeLoader "compiles" spec files into catalogtest providers.
type nativeLoader struct {
	compiles  atomic.Int64
	instances atomic.Int64
	closed    atomic.Int64
}

func (l *nativeLoader) Compile(_ context.Context, path string, data []byte, _ string, _ config.Plugin) (Module, error) {
	l.compiles.Add(1)
	var s spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: not a plugin: %w", filepath.Base(path), err)
	}
	return &nativeModule{l: l, s: s}, nil
}

type nativeModule struct {
	l *nativeLoader
	s spec
}

func (m *nativeModule) manifest() abi.Manifest {
	return abi.Manifest{
		Name: m.s.Name, Version: m.s.Version, ABI: abi.Major,
		Schemes:      []string{m.s.Scheme},
		Resources:    []abi.Resource{{URI: m.s.Scheme + "://doc", Name: "doc", MimeType: "text/plain"}},
		Capabilities: m.s.Caps, RequiredCapabilities: m.s.Required,
	}
}

func (m *nativeModule) Manifest() *abi.Manifest { mf := m.manifest(); return &mf }

func (m *nativeModule) Instantiate(_ context.Context, settings config.Plugin) (Plugin, error) {
	m.l.instances.Add(1)
	text := m.s.Text
	if v, ok := settings.Grants.Config["suffix"]; ok {
		text += v
	}
	p := &nativePlugin{l: m.l}
	p.Provider = catalogtest.Provider{
		M: m.manifest(),
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "mimeType": "text/plain", "text": text}}}, nil
		},
	}
	return p, nil
}

func (m *nativeModule) Close(context.Context) error { return nil }

type nativePlugin struct {
	catalogtest.Provider
	l      *nativeLoader
	closed atomic.Bool
}

func (p *nativePlugin) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	if p.closed.Load() {
		return catalog.Result{}, errors.New("plugin is closed")
	}
	return p.Provider.Call(ctx, c)
}

var _ Plugin = (*nativePlugin)(nil)

func (p *nativePlugin) Life() string { return "" }

func (p *nativePlugin) Close(context.Context) error {
	p.closed.Store(true)
	p.l.closed.Add(1)
	return nil
}

func writeSpec(t *testing.T, dir, file string, s spec) {
	t.Helper()
	b, _ := json.Marshal(s)
	writeRaw(t, dir, file, b)
}

// writeRaw replaces a file by rename, as a deploy would.
func writeRaw(t *testing.T, dir, file string, b []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "."+file+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}

// read returns the text of uri from the current set, or the error.
func read(cat *catalog.Catalog, uri string) (string, error) {
	res, err := cat.Current().ReadResource(context.Background(), catalog.Request{Principal: catalog.Anonymous()}, uri)
	if err != nil {
		return "", err
	}
	var c struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(res.Contents[0], &c); err != nil {
		return "", err
	}
	return c.Text, nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	within(t, 2*time.Second, what, cond)
}

func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type events struct {
	mu sync.Mutex
	ev []Event
}

func (e *events) add(ev Event) { e.mu.Lock(); e.ev = append(e.ev, ev); e.mu.Unlock() }
func (e *events) all() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.ev...)
}

func start(t *testing.T, dir string, loader Loader, cfg *config.Config, ev *events) *Registry {
	t.Helper()
	return startWith(t, Options{
		Dir: dir, Loader: loader, Config: cfg,
		Debounce: 30 * time.Millisecond, Rescan: 500 * time.Millisecond,
		DrainGrace: 20 * time.Millisecond,
	}, ev)
}

// startWith runs a registry with opts until the test ends, once its first
// scan is over.
func startWith(t *testing.T, opts Options, ev *events) *Registry {
	t.Helper()
	r := run(t, opts, ev)
	// The first scan may compile Go guests cold (seconds under -race on a
	// busy machine); the 2 s bound applies to the changes that follow.
	within(t, time.Minute, "first scan", r.Ready)
	return r
}

// run runs a registry with opts until the test ends.
func run(t *testing.T, opts Options, ev *events) *Registry {
	t.Helper()
	var r *Registry
	if ev != nil {
		opts.OnChange = func(e Event) {
			_ = r.Status() // OnChange may look at the registry
			ev.add(e)
		}
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// settledState waits (up to d) until the file is no longer pending, as
// readiness does not wait for the last new unbound file while the
// configuration binds plugins, and returns its state.
func settledState(t *testing.T, r *Registry, name string, d time.Duration) FileStatus {
	t.Helper()
	within(t, d, name+" settled", func() bool {
		s := fileState(r, name).State
		return s != StatePending && s != ""
	})
	return fileState(r, name)
}

func fileState(r *Registry, name string) FileStatus {
	for _, f := range r.Status().Files {
		if filepath.Base(f.Path) == name {
			return f
		}
	}
	return FileStatus{}
}

func TestAddReplaceCorruptRemove(t *testing.T) {
	dir := t.TempDir()
	loader := &nativeLoader{}
	ev := &events{}
	r := start(t, dir, loader, nil, ev)
	cat := r.Catalog()

	steps := []struct {
		name  string
		do    func()
		check func() bool
		event *Event
	}{
		{"add", func() { writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "1", Scheme: "a", Text: "v1"}) },
			func() bool { s, _ := read(cat, "a://doc"); return s == "v1" },
			&Event{Resources: true, Added: []string{"a"}}},
		{"replace", func() { writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "2", Scheme: "a", Text: "v2"}) },
			func() bool { s, _ := read(cat, "a://doc"); return s == "v2" },
			&Event{Resources: true, Replaced: []string{"a"}}},
		{"corrupt keeps the last good version", func() { writeRaw(t, dir, "a.wasm", []byte("\x00asm garbage")) },
			func() bool {
				s, _ := read(cat, "a://doc")
				f := fileState(r, "a.wasm")
				return f.State == StateFailed && s == "v2" && f.Version == "2" && strings.Contains(f.Error, "not a plugin")
			}, nil},
		{"repair", func() { writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "3", Scheme: "a", Text: "v3"}) },
			func() bool {
				s, _ := read(cat, "a://doc")
				return s == "v3" && fileState(r, "a.wasm").State == StateServing
			},
			&Event{Resources: true, Replaced: []string{"a"}}},
		{"remove", func() { os.Remove(filepath.Join(dir, "a.wasm")) },
			func() bool {
				_, err := read(cat, "a://doc")
				e := catalog.AsError(err)
				return e != nil && e.Kind == catalog.KindResourceNotFound
			},
			&Event{Resources: true, Removed: []string{"a"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := len(ev.all())
			st.do()
			eventually(t, st.name, st.check)
			got := ev.all()
			if st.event == nil {
				if len(got) != before {
					t.Errorf("unexpected events %+v", got[before:])
				}
				return
			}
			eventually(t, "event", func() bool { return len(ev.all()) > before })
			got = ev.all()
			if len(got) != before+1 {
				t.Fatalf("%d events, want 1: %+v", len(got)-before, got[before:])
			}
			e := got[before]
			if e.Generation != cat.Current().Generation() {
				t.Errorf("event generation %s, serving %s", e.Generation, cat.Current().Generation())
			}
			e.Generation = ""
			if diff := cmp.Diff(*st.event, e); diff != "" {
				t.Errorf("event (-want +got)\n%s", diff)
			}
		})
	}
	eventually(t, "retired plugins closed", func() bool { return loader.closed.Load() == 3 })
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Scheme: "a", Text: "hello"})
	writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "bee"})
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{"a.wasm", "b.wasm"} {
		os.Chtimes(filepath.Join(dir, f), old, old)
	}
	disabled := config.DefaultPlugin()
	disabled.Enabled = false
	pinned := config.DefaultPlugin()
	pinned.SHA256 = strings.Repeat("0", 64)
	cfg := &config.Config{Plugin: map[string]config.Plugin{"a": disabled, "b": pinned}}
	loader := &nativeLoader{}
	ev := &events{}
	r := start(t, dir, loader, cfg, ev)

	if got := fileState(r, "a.wasm").State; got != StateDisabled {
		t.Errorf("a is %s, want disabled", got)
	}
	if f := fileState(r, "b.wasm"); f.State != StateRefused || !strings.Contains(f.Error, "the binding pins") {
		t.Errorf("b: %+v, want a pin mismatch", f)
	}
	compiles := loader.compiles.Load()

	enabled := config.DefaultPlugin()
	enabled.Grants.Config = map[string]string{"suffix": "!"}
	r.UpdateConfig(&config.Config{Plugin: map[string]config.Plugin{"a": enabled, "b": pinned}})
	eventually(t, "a enabled with new grants", func() bool { s, _ := read(r.Catalog(), "a://doc"); return s == "hello!" })
	if got := loader.compiles.Load() - compiles; got != 1 {
		// b failed and is retried (1 compile); a must not be recompiled.
		t.Errorf("%d compiles after the settings change, want 1 (b's retry)", got)
	}

	// Touching a file without changing it reloads nothing.
	compiles, instances := loader.compiles.Load(), loader.instances.Load()
	now := time.Now().Add(-time.Second)
	os.Chtimes(filepath.Join(dir, "a.wasm"), now, now)
	r.Trigger()
	time.Sleep(200 * time.Millisecond)
	if c, i := loader.compiles.Load()-compiles, loader.instances.Load()-instances; c != 0 || i != 0 {
		t.Errorf("after touch: %d compiles, %d instances; want none", c, i)
	}
}

func TestHalfWrittenFileNeverLoads(t *testing.T) {
	dir := t.TempDir()
	loader := &nativeLoader{}
	r := start(t, dir, loader, nil, nil)
	b, _ := json.Marshal(spec{Name: "a", Scheme: "a", Text: strings.Repeat("x", 4096)})
	f, err := os.Create(filepath.Join(dir, "a.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 512 {
		f.Write(b[i:min(i+512, len(b))])
		time.Sleep(3 * time.Millisecond)
	}
	f.Close()
	eventually(t, "a loaded", func() bool { return fileState(r, "a.wasm").State == StateServing })
	if n := loader.compiles.Load(); n != 1 {
		t.Errorf("%d compiles, want 1 (the partial file must not be compiled)", n)
	}
}

// TestHotReloadUnderLoad hammers plugin a while plugin b is added,
// replaced, corrupted and removed: readers of a must see no error at all.
func TestHotReloadUnderLoad(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Scheme: "a", Text: "steady"})
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "a.wasm"), old, old)
	loader := &nativeLoader{}
	r := start(t, dir, loader, nil, nil)
	hammer(t, 4, r.Catalog(), "a://doc", "steady", func() {
		for i, step := range []func(){
			func() { writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "1"}) },
			func() { writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "2"}) },
			func() { writeRaw(t, dir, "b.wasm", []byte("corrupt")) },
			func() { writeSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "3"}) },
			func() { os.Remove(filepath.Join(dir, "b.wasm")) },
		} {
			step()
			want := []string{"1", "2", "2", "3", ""}[i]
			eventually(t, fmt.Sprintf("step %d", i), func() bool {
				s, _ := read(r.Catalog(), "b://doc")
				return s == want
			})
		}
	})
	// a was never reloaded: one instance for a, one per good version of b.
	if n := loader.instances.Load(); n != 4 {
		t.Errorf("%d instances, want 4", n)
	}
}

// hammer reads uri from readers goroutines while change runs, and fails
// on any error or unexpected text.
func hammer(t *testing.T, readers int, cat *catalog.Catalog, uri, want string, change func()) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	var firstErr atomic.Value
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := read(cat, uri)
				reads.Add(1)
				if err != nil || s != want {
					bad.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%q, %v", s, err))
				}
			}
		}()
	}
	change()
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d reads failed; first: %v", bad.Load(), reads.Load(), firstErr.Load())
	}
	if reads.Load() == 0 {
		t.Error("no reads happened")
	}
}

// TestLoadWaitsForFreshFiles: at start-up, Load serves a file written just
// before, once it has settled, rather than skipping it.
func TestLoadWaitsForFreshFiles(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Scheme: "a", Text: "fresh"})
	r, err := New(Options{Dir: dir, Loader: &nativeLoader{}, Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if pending, err := r.Scan(context.Background()); err != nil || !pending {
		t.Fatalf("first Scan = %v, %v; want the fresh file pending", pending, err)
	}
	if r.Ready() {
		t.Error("ready while a file is still settling")
	}
	if err := r.Load(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if s, err := read(r.Catalog(), "a://doc"); err != nil || s != "fresh" {
		t.Errorf("a://doc = %q, %v after Load", s, err)
	}
	if !r.Ready() {
		t.Error("not ready after Load")
	}
}

// TestDisableByConfig: disabling a serving plugin removes it from the set
// with an event, and closes it.
func TestDisableByConfig(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Scheme: "a", Text: "x"})
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "a.wasm"), old, old)
	loader := &nativeLoader{}
	ev := &events{}
	r := start(t, dir, loader, nil, ev)
	off := config.DefaultPlugin()
	off.Enabled = false
	r.UpdateConfig(&config.Config{Plugin: map[string]config.Plugin{"a": off}})
	eventually(t, "a disabled", func() bool { return fileState(r, "a.wasm").State == StateDisabled })
	eventually(t, "a closed", func() bool { return loader.closed.Load() == 1 })
	got := ev.all()
	if len(got) != 2 || !cmp.Equal(got[1].Removed, []string{"a"}) {
		t.Errorf("events %+v, want an add then a removal of a", got)
	}
	if n := loader.compiles.Load(); n != 1 {
		t.Errorf("%d compiles, want 1", n)
	}
}

// overlapLoader wraps nativeLoader and records how many compiles ran at
// once; each compile waits (up to a bound) for a second one to start, so
// a registry that loads files one at a time shows a peak of 1.
type overlapLoader struct {
	nativeLoader
	mu       sync.Mutex
	inFlight int
	peak     int
}

func (l *overlapLoader) Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error) {
	l.mu.Lock()
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	deadline := time.Now().Add(2 * time.Second)
	for l.inFlight < 2 && time.Now().Before(deadline) {
		l.mu.Unlock()
		time.Sleep(time.Millisecond)
		l.mu.Lock()
	}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight--
		l.mu.Unlock()
	}()
	return l.nativeLoader.Compile(ctx, path, data, digest, probe)
}

// TestLoadsFilesInParallel: a directory of many plugins, some broken, is
// loaded several files at a time; every good file serves and every broken
// one is reported, exactly as a one-at-a-time load would.
func TestLoadsFilesInParallel(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs 2 CPUs")
	}
	dir := t.TempDir()
	const n = 12
	for i := range n {
		if i%4 == 3 {
			writeRaw(t, dir, fmt.Sprintf("p%02d.wasm", i), []byte("not a plugin"))
			continue
		}
		writeSpec(t, dir, fmt.Sprintf("p%02d.wasm", i), spec{Name: fmt.Sprintf("p%02d", i), Version: "1", Scheme: fmt.Sprintf("s%02d", i), Text: fmt.Sprint(i)})
	}
	old := time.Now().Add(-time.Hour) // settled: no debounce wait
	for i := range n {
		if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("p%02d.wasm", i)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	l := &overlapLoader{}
	var progress []int
	r, err := New(Options{Dir: dir, Loader: l, Debounce: 30 * time.Millisecond,
		Progress: func(done, total int) { progress = append(progress, done*100+total) }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if err := r.Load(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if l.peak < 2 {
		t.Errorf("peak concurrent compiles = %d, want >= 2", l.peak)
	}
	for i := range n {
		got, err := read(r.Catalog(), fmt.Sprintf("s%02d://doc", i))
		if i%4 == 3 {
			if err == nil {
				t.Errorf("p%02d (broken) serves %q", i, got)
			}
			if fs := fileState(r, fmt.Sprintf("p%02d.wasm", i)); fs.Error == "" {
				t.Errorf("p%02d (broken): no error in Status", i)
			}
			continue
		}
		if err != nil || got != fmt.Sprint(i) {
			t.Errorf("s%02d://doc = %q, %v", i, got, err)
		}
	}
	want := make([]int, n)
	for i := range want {
		want[i] = (i+1)*100 + n
	}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("Progress calls (-want +got):\n%s", diff)
	}
}
