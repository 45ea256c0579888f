package plugin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func init() {
	registerEngine(EngineWazero, func(cacheDir string) (backend, error) { return newWazeroBackend(cacheDir) })
}

// wazeroBackend creates wazero engines that share one compilation cache,
// so a module compiled for one memory limit is not compiled again for
// another, and a file-backed cache survives restarts.
type wazeroBackend struct {
	cache wazero.CompilationCache
}

// newWazeroBackend returns a backend whose compilation cache lives in
// cacheDir (created 0700), or in memory when cacheDir is empty.
func newWazeroBackend(cacheDir string) (*wazeroBackend, error) {
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
	return &wazeroBackend{cache: c}, nil
}

func (b *wazeroBackend) NewEngine(ctx context.Context, cfg EngineConfig) (Engine, error) {
	if cfg.Fuel > 0 {
		return nil, errors.New("plugin: fuel metering needs the wasmtime engine; wazero has none")
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(true).
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
	return &wazeroEngine{r: r}, nil
}

func (b *wazeroBackend) Close(ctx context.Context) error {
	return b.cache.Close(ctx)
}

type wazeroEngine struct {
	r wazero.Runtime
}

func (e *wazeroEngine) Compile(ctx context.Context, wasm []byte) (CompiledModule, error) {
	cm, err := e.r.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	return &wazeroModule{r: e.r, cm: cm}, nil
}

func (e *wazeroEngine) Close(ctx context.Context) error { return e.r.Close(ctx) }

type wazeroModule struct {
	r  wazero.Runtime
	cm wazero.CompiledModule
}

func (m *wazeroModule) Exports() map[string]Signature {
	out := make(map[string]Signature)
	for name, d := range m.cm.ExportedFunctions() {
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
	exports := m.cm.ExportedFunctions()
	var starts []string
	for _, s := range cfg.StartFunctions {
		if _, ok := exports[s]; ok {
			starts = append(starts, s)
		}
	}
	// No args, no environment, no file system; real clocks and entropy.
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(starts...).
		WithStdout(io.Discard).
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	mod, err := m.r.InstantiateModule(ctx, m.cm, mc)
	if err != nil {
		return nil, err
	}
	return &wazeroInstance{mod: mod}, nil
}

func (m *wazeroModule) Close(ctx context.Context) error { return m.cm.Close(ctx) }

type wazeroInstance struct {
	mod api.Module
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
	f := wazeroFunction{fn}
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

type wazeroFunction struct{ fn api.Function }

func (f wazeroFunction) Call(ctx context.Context, stack []uint64) error {
	return f.fn.CallWithStack(ctx, stack)
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
