package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
)

// Engine names, as the configuration spells them.
const (
	// EngineWazero is the pure-Go wazero compiler: the default and the
	// only engine in a default build.
	EngineWazero = "wazero"
	// EngineWasmtime is wasmtime (Cranelift) through cgo; it exists only
	// in binaries built with -tags wasmtime (make build-wasmtime).
	EngineWasmtime = "wasmtime"
)

// DefaultEngine runs plugins when neither the runtime nor the plugin names
// an engine.
const DefaultEngine = EngineWazero

// backend creates the engines of one kind. All engines of a backend share
// its compilation cache.
type backend interface {
	NewEngine(ctx context.Context, cfg EngineConfig) (Engine, error)
	Close(ctx context.Context) error
}

// backendConfig is what a backend is created with.
type backendConfig struct {
	// CacheDir holds the compilation cache; "" keeps it in memory.
	CacheDir string
	// Host returns the corral binary's sha256 (hex), "" when it is
	// unknown: what a backend caches beside compiled code is keyed by it.
	Host func() string
	Log  *slog.Logger
}

// backendFactory creates a backend.
type backendFactory func(cfg backendConfig) (backend, error)

var (
	factoriesMu sync.Mutex
	factories   = map[string]backendFactory{}
)

// registerEngine makes an engine available; engine files call it from init.
func registerEngine(name string, f backendFactory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	factories[name] = f
}

// Engines returns the names of the engines compiled into this binary,
// sorted.
func Engines() []string {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	out := make([]string, 0, len(factories))
	for name := range factories {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// CheckEngine returns nil when the named engine ("" for the default) is
// compiled into this binary, and otherwise an error that says how to get
// it.
func CheckEngine(name string) error {
	_, err := factory(name)
	return err
}

func factory(name string) (backendFactory, error) {
	if name == "" {
		name = DefaultEngine
	}
	factoriesMu.Lock()
	f, ok := factories[name]
	factoriesMu.Unlock()
	if ok {
		return f, nil
	}
	if name == EngineWasmtime {
		return nil, fmt.Errorf("plugin: engine %q is not in this build of corral (built with engines %v); build with -tags wasmtime (make build-wasmtime)", name, Engines())
	}
	known := slices.Sorted(slices.Values([]string{EngineWazero, EngineWasmtime}))
	return nil, fmt.Errorf("plugin: unknown engine %q (known: %v)", name, known)
}
