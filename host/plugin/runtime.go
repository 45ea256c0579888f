package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// Notifier receives the notifications plugins send with the notify host
// function. kind is one of the abi.Notify* values; uri is set for
// abi.NotifyResourceUpdated. Notify is called from one runtime goroutine
// and should not block for long.
type Notifier interface {
	Notify(plugin string, kind int32, uri string)
}

// RuntimeConfig configures a Runtime.
type RuntimeConfig struct {
	// CacheDir holds the compilation cache (created 0700). Empty keeps
	// compiled code in memory only.
	CacheDir string
	// MetaDir holds the metadata cache (metacache.go): the description of
	// every file Open compiled, so that a restart neither compiles nor
	// instantiates an unchanged file. Empty keeps none.
	MetaDir string
	// DataDir holds per-plugin data: the kv store of plugin p lives under
	// DataDir/p/. Empty keeps kv stores in memory.
	DataDir string
	// Logger receives runtime and plugin logs; nil discards them.
	Logger *slog.Logger
	// Notifier receives plugin notifications; nil drops them.
	Notifier Notifier
	// Observer receives metrics events; nil records nothing.
	Observer Observer
	// OpenStore opens the kv store of a plugin with the given quota. Nil
	// uses a file store under DataDir (or memory).
	OpenStore func(plugin string, quota int64) (Store, error)
	// Engine runs the plugins whose Config names no engine: EngineWazero
	// (the default when empty) or EngineWasmtime. NewRuntime fails when the
	// engine is not compiled into the binary.
	Engine string
	// NotifyQueue is the capacity of the notification queue (default
	// 1024). When it is full, notifications are dropped and counted.
	NotifyQueue int
	// Compile bounds the files Compile accepts; zero fields take their
	// DefaultCompileLimits value.
	Compile CompileLimits
	// WakeTimeout bounds how long a call waits for the wake-up of a
	// sleeping plugin (a compile, through the cache, and an instance),
	// whatever the plugin's own call deadline (default
	// DefaultWakeTimeout); the request's context bounds it too.
	WakeTimeout time.Duration
	// ReleaseAfter, when positive, has the runtime give the memory the Go
	// heap holds free back to the system once the plugins' life cycle has
	// been quiet that long: no module opened, no plugin put to sleep or
	// closed (release.go). Zero leaves it to the Go runtime, which keeps
	// the pages of the heap's last peak; corral serve sets it.
	ReleaseAfter time.Duration
}

// DefaultWakeTimeout is RuntimeConfig.WakeTimeout when it is not set: the
// registry's default compile budget.
const DefaultWakeTimeout = time.Minute

// Runtime compiles and loads plugins. One Runtime serves a process; it is
// safe for concurrent use.
type Runtime struct {
	cfg        RuntimeConfig
	log        *slog.Logger
	obs        Observer
	engineName string // the default engine's name
	funcs      []HostFunc

	mu       sync.Mutex
	backends map[string]backend
	engines  map[engineKey]Engine
	code     map[codeKey]*compiled
	stores   map[string]*sharedStore
	closed   bool

	compiles atomic.Int64 // engine compiles (from the compilation cache or not)
	rel      *releaser    // nil without RuntimeConfig.ReleaseAfter

	hostOnce sync.Once
	host     string // the executable's digest, keying the metadata cache (metacache.go)

	notifyCh      chan notification
	notifyDone    chan struct{}
	notifyDropped atomic.Int64
}

// engineKey names one Engine of a Runtime: engines are fixed at creation,
// so each memory limit (and fuel budget) has its own.
type engineKey struct {
	name  string
	pages uint32
	fuel  uint64
}

type notification struct {
	plugin string
	kind   int32
	uri    string
}

// NewRuntime creates a Runtime.
func NewRuntime(ctx context.Context, cfg RuntimeConfig) (*Runtime, error) {
	if cfg.Engine == "" {
		cfg.Engine = DefaultEngine
	}
	f, err := factory(cfg.Engine)
	if err != nil {
		return nil, err
	}
	if cfg.NotifyQueue <= 0 {
		cfg.NotifyQueue = 1024
	}
	if cfg.WakeTimeout <= 0 {
		cfg.WakeTimeout = DefaultWakeTimeout
	}
	cfg.Compile = cfg.Compile.withDefaults()
	r := &Runtime{
		cfg:        cfg,
		log:        cfg.Logger,
		obs:        cfg.Observer,
		engineName: cfg.Engine,
		backends:   make(map[string]backend),
		engines:    make(map[engineKey]Engine),
		code:       make(map[codeKey]*compiled),
		stores:     make(map[string]*sharedStore),
		notifyCh:   make(chan notification, cfg.NotifyQueue),
		notifyDone: make(chan struct{}),
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r.rel = newReleaser(cfg.ReleaseAfter, r.log)
	if r.obs == nil {
		r.obs = nopObserver{}
	}
	b, err := f(r.backendConfig())
	if err != nil {
		return nil, err
	}
	r.backends[cfg.Engine] = b
	r.funcs = hostFuncs()
	go r.deliverNotifications()
	return r, nil
}

// DroppedNotifications returns how many notifications were dropped because
// the queue was full.
func (r *Runtime) DroppedNotifications() int64 { return r.notifyDropped.Load() }

func (r *Runtime) deliverNotifications() {
	defer close(r.notifyDone)
	for n := range r.notifyCh {
		if r.cfg.Notifier != nil {
			r.cfg.Notifier.Notify(n.plugin, n.kind, n.uri)
		}
	}
}

// enqueue queues a notification without blocking; it reports false when
// the queue is full.
func (r *Runtime) enqueue(n notification) (ok bool) {
	defer func() {
		if recover() != nil { // the runtime closed the queue
			ok = false
		}
	}()
	select {
	case r.notifyCh <- n:
		return true
	default:
		r.notifyDropped.Add(1)
		return false
	}
}

// DefaultEngine returns the name of the engine that runs plugins whose
// Config names none.
func (r *Runtime) DefaultEngine() string { return r.engineName }

// engine returns the engine for a key, creating it (and its backend) on
// first use.
func (r *Runtime) engine(ctx context.Context, k engineKey) (Engine, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("plugin: runtime closed")
	}
	if e, ok := r.engines[k]; ok {
		return e, nil
	}
	b, ok := r.backends[k.name]
	if !ok {
		f, err := factory(k.name)
		if err != nil {
			return nil, err
		}
		if b, err = f(r.backendConfig()); err != nil {
			return nil, err
		}
		r.backends[k.name] = b
	}
	e, err := b.NewEngine(ctx, EngineConfig{
		MemoryLimitPages: k.pages,
		Fuel:             k.fuel,
		HostModule:       abi.ImportModule,
		HostFuncs:        r.funcs,
	})
	if err != nil {
		return nil, err
	}
	r.engines[k] = e
	return e, nil
}

// backendConfig is what the runtime's backends are created with.
func (r *Runtime) backendConfig() backendConfig {
	return backendConfig{CacheDir: r.cfg.CacheDir, Host: r.hostDigest, Log: r.log}
}

// Close closes every engine (and so every instance and compiled module)
// and the compilation cache. Close plugins first to flush their stores.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.rel.close()
	engines, backends := r.engines, r.backends
	r.engines, r.backends = nil, nil
	r.mu.Unlock()
	var errs []error
	for _, e := range engines {
		errs = append(errs, e.Close(ctx))
	}
	for _, b := range backends {
		errs = append(errs, b.Close(ctx))
	}
	close(r.notifyCh)
	<-r.notifyDone
	return errors.Join(errs...)
}

// Inspect compiles wasm in a throw-away runtime, checks its ABI and returns
// its manifest, obtained with no capabilities granted.
func Inspect(ctx context.Context, wasm []byte) (*abi.Manifest, error) {
	r, err := NewRuntime(ctx, RuntimeConfig{})
	if err != nil {
		return nil, err
	}
	defer r.Close(ctx)
	m, err := r.Compile(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	p, err := r.Load(ctx, m, Config{PoolSize: 1})
	if err != nil {
		return nil, err
	}
	man := p.Manifest()
	if err := p.Close(ctx); err != nil {
		return nil, err
	}
	return man, nil
}
