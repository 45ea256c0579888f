package plugin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/corral-mcp/corral/host/plugin/internal/interrupt"
)

func init() {
	registerEngine(EngineWazero, func(cfg backendConfig) (backend, error) { return newWazeroBackend(cfg) })
}

// wazeroBackend creates wazero engines that share one compilation cache,
// so a module compiled for one memory limit is not compiled again for
// another, and a file-backed cache survives restarts, with the rewritten
// modules it was compiled from (engine_wazero_cache.go).
type wazeroBackend struct {
	cache   wazero.CompilationCache
	dir     string // the cache directory, "" in memory
	rewrite rewriteCache
}

// newWazeroBackend returns a backend whose compilation cache lives in
// cfg.CacheDir (created 0700), or in memory when it is empty.
func newWazeroBackend(cfg backendConfig) (*wazeroBackend, error) {
	cacheDir := cfg.CacheDir
	if cacheDir == "" {
		return &wazeroBackend{cache: wazero.NewCompilationCache()}, nil
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("plugin: cache dir: %w", err)
	}
	// The cache holds native code that will be executed: nobody else may
	// write there.
	if err := os.Chmod(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("plugin: cache dir: %w", err)
	}
	c, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("plugin: cache dir: %w", err)
	}
	rw := rewriteCache{dir: filepath.Join(cacheDir, "interrupt"), host: cfg.Host, log: cfg.Log}
	if rw.log == nil {
		rw.log = slog.New(slog.DiscardHandler)
	}
	return &wazeroBackend{cache: c, dir: cacheDir, rewrite: rw}, nil
}

func (b *wazeroBackend) NewEngine(ctx context.Context, cfg EngineConfig) (Engine, error) {
	if cfg.Fuel > 0 {
		return nil, errors.New("plugin: fuel metering needs the wasmtime engine; wazero has none")
	}
	// No WithCloseOnContextDone: its check on every loop iteration and
	// function entry costs an exit to Go each time. Compile instruments
	// the module instead, and every call arms the interrupt flag
	// (engine_wazero_interrupt.go).
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(cfg.MemoryLimitPages).
		WithCompilationCache(b.cache)
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("plugin: wasi: %w", err)
	}
	if cfg.HostModule != "" {
		hb := r.NewHostModuleBuilder(cfg.HostModule)
		for _, hf := range cfg.HostFuncs {
			fn := hf.Fn
			hb.NewFunctionBuilder().
				WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
					fn(ctx, m.Memory(), stack)
				}), toAPITypes(hf.Sig.Params), toAPITypes(hf.Sig.Results)).
				Export(hf.Name)
		}
		if _, err := hb.Instantiate(ctx); err != nil {
			_ = r.Close(ctx)
			return nil, fmt.Errorf("plugin: host module: %w", err)
		}
	}
	return &wazeroEngine{r: r, b: b, rc: rc}, nil
}

func (b *wazeroBackend) Close(ctx context.Context) error {
	return b.cache.Close(ctx)
}

type wazeroEngine struct {
	r  wazero.Runtime
	b  *wazeroBackend
	rc wazero.RuntimeConfig // r's, to compile as r does
}

func (e *wazeroEngine) Compile(ctx context.Context, digest string, read func() ([]byte, error)) (CompiledModule, error) {
	// The rewrite's decoder is the first gate: wazero never sees a module
	// it refused (nor allocates what a forged count announces). A cached
	// rewrite passed it when it was made; the file is then read (its
	// digest checked) while wazero compiles the rewrite.
	if instrumented, ok := e.b.rewrite.get(digest); ok {
		checked := make(chan error, 1)
		go func() {
			_, err := read()
			checked <- err
		}()
		cm, err := e.compile(ctx, instrumented)
		if rerr := <-checked; rerr != nil {
			if err == nil {
				_ = cm.Close(ctx)
			}
			return nil, rerr
		}
		return cm, err
	}
	wasm, err := read()
	if err != nil {
		return nil, err
	}
	instrumented, _, err := interrupt.Instrument(wasm)
	if err != nil {
		return nil, err
	}
	cm, err := e.compile(ctx, instrumented)
	if err != nil {
		return nil, err
	}
	e.b.rewrite.put(digest, instrumented) // only what wazero accepts takes room on disk
	return cm, nil
}

// compile compiles the rewritten module through the compilation cache.
func (e *wazeroEngine) compile(ctx context.Context, instrumented []byte) (CompiledModule, error) {
	cm, err := e.r.CompileModule(ctx, instrumented)
	if err != nil && e.b.dir != "" {
		// A corrupt cache entry (truncated by a full disk, a bad copy)
		// fails the compile, and wazero tells it from a bad module only by
		// its error's text. A compile into a fresh cache tells them apart:
		// if it succeeds, the cache was at fault, and its entry replaces
		// the bad one.
		modErr, hostErr := e.b.replaceEntry(ctx, e.rc, instrumented)
		switch {
		case modErr != nil:
			return nil, err // the module's own fault
		case hostErr != nil:
			return nil, fmt.Errorf("%w: %w (replacing the cache entry: %w)", ErrHost, err, hostErr)
		}
		if cm, err = e.r.CompileModule(ctx, instrumented); err != nil {
			return nil, fmt.Errorf("%w: compiles, but not through the cache: %w", ErrHost, err)
		}
	}
	if err != nil {
		return nil, err
	}
	return &wazeroModule{r: e.r, cm: cm}, nil
}

// replaceEntry compiles wasm as rc says, into a fresh cache beside the
// real one, and moves the entry it wrote over the real cache's entry for
// wasm (wazero names entries by a key it does not expose, and has no way
// to delete one). The rename is atomic: a concurrent reader sees the old entry or
// the new one. modErr is the fresh compile's failure (the module's
// fault); hostErr any other. An API in wazero to validate or evict one
// entry would make this unnecessary (none in v1.12.0).
func (b *wazeroBackend) replaceEntry(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte) (modErr, hostErr error) {
	tmp, err := os.MkdirTemp(b.dir, ".recompile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	c, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		return nil, err
	}
	r := wazero.NewRuntimeWithConfig(ctx, rc.WithCompilationCache(c))
	_, cerr := r.CompileModule(ctx, wasm)
	_ = r.Close(ctx)
	_ = c.Close(ctx)
	if cerr != nil {
		return cerr, nil
	}
	entries, err := filepath.Glob(filepath.Join(tmp, "*", "*"))
	if err != nil || len(entries) != 1 {
		return nil, fmt.Errorf("want one fresh cache entry, found %d (%v)", len(entries), err)
	}
	rel, err := filepath.Rel(tmp, entries[0])
	if err != nil {
		return nil, err
	}
	return nil, os.Rename(entries[0], filepath.Join(b.dir, rel))
}

func (e *wazeroEngine) Close(ctx context.Context) error { return e.r.Close(ctx) }

type wazeroModule struct {
	r  wazero.Runtime
	cm wazero.CompiledModule
}

func (m *wazeroModule) Exports() map[string]Signature {
	out := make(map[string]Signature)
	for name, d := range m.cm.ExportedFunctions() {
		if interrupt.Reserved(name) {
			continue
		}
		out[name] = Signature{Params: fromAPITypes(d.ParamTypes()), Results: fromAPITypes(d.ResultTypes())}
	}
	return out
}

func (m *wazeroModule) Memories() []string {
	var out []string
	for name := range m.cm.ExportedMemories() {
		out = append(out, name)
	}
	return out
}

func (m *wazeroModule) Imports() []Import {
	var out []Import
	for _, d := range m.cm.ImportedFunctions() {
		mod, name, _ := d.Import()
		out = append(out, Import{Module: mod, Name: name,
			Sig: Signature{Params: fromAPITypes(d.ParamTypes()), Results: fromAPITypes(d.ResultTypes())}})
	}
	return out
}

func (m *wazeroModule) Instantiate(ctx context.Context, cfg InstanceConfig) (Instance, error) {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	irq := &interrupter{}
	// No args, no environment, no file system; real clocks and entropy.
	// wazero runs no start function: the module's own (exported by the
	// rewrite) and cfg.StartFunctions run below as armed calls, so a
	// runaway initialisation stops at the deadline too. A guest's sleep
	// wakes when the armed call's context is done.
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(io.Discard).
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(irq.sleep).
		WithRandSource(rand.Reader)
	// Linear memories outside the Go heap where the platform allows
	// (mmapmem_linux.go): the collector does not pace against them, and
	// their pages return to the system when the instance closes.
	mod, err := m.r.InstantiateModule(withLinearMemory(ctx), m.cm, mc)
	if err != nil {
		return nil, err
	}
	flag, ok := mod.ExportedGlobal(interrupt.FlagExport).(api.MutableGlobal)
	if !ok {
		_ = mod.Close(ctx)
		return nil, errors.New("plugin: the instrumented module lacks its interrupt flag")
	}
	irq.flag = flag
	in := &wazeroInstance{mod: mod, irq: irq}
	starts := []string{interrupt.StartExport}
	for _, s := range cfg.StartFunctions {
		if !interrupt.Reserved(s) {
			starts = append(starts, s)
		}
	}
	for _, name := range starts {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			continue
		}
		err := in.call(ctx, fn, nil)
		if err == nil {
			continue
		}
		_ = mod.Close(ctx)
		// As wazero's own start functions: proc_exit(0) is success, other
		// exits are returned as they are, the rest names the function.
		var ee *sys.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == 0 {
				return in, nil
			}
			return nil, err
		}
		if name == interrupt.StartExport {
			name = "the start function"
		}
		return nil, fmt.Errorf("%s: %w", name, err) // as wasmtime names it
	}
	return in, nil
}

func (m *wazeroModule) Close(ctx context.Context) error { return m.cm.Close(ctx) }

type wazeroInstance struct {
	mod api.Module
	irq *interrupter
	mu  sync.Mutex
	fns map[string]Function
}

func (i *wazeroInstance) Function(name string) Function {
	i.mu.Lock()
	defer i.mu.Unlock()
	if f, ok := i.fns[name]; ok {
		return f
	}
	fn := i.mod.ExportedFunction(name)
	if fn == nil {
		return nil
	}
	if i.fns == nil {
		i.fns = make(map[string]Function)
	}
	f := wazeroFunction{i, fn}
	i.fns[name] = f
	return f
}

func (i *wazeroInstance) Memory() Memory {
	if m := i.mod.Memory(); m != nil {
		return m
	}
	return nil
}

func (i *wazeroInstance) Close(ctx context.Context) error { return i.mod.Close(ctx) }

type wazeroFunction struct {
	in *wazeroInstance
	fn api.Function
}

func (f wazeroFunction) Call(ctx context.Context, stack []uint64) error {
	return f.in.call(ctx, f.fn, stack)
}

func toAPITypes(ts []ValueType) []api.ValueType {
	out := make([]api.ValueType, len(ts))
	for i, t := range ts {
		out[i] = api.ValueType(t)
	}
	return out
}

func fromAPITypes(ts []api.ValueType) []ValueType {
	out := make([]ValueType, len(ts))
	for i, t := range ts {
		out[i] = ValueType(t)
	}
	return out
}
