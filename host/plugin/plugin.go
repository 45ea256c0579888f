package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

// describeRequest is the payload of abi.OpDescribe.
var describeRequest = []byte("{}")

// Plugin is a loaded plugin: its manifest, its capabilities and a bounded
// pool of instances. It implements catalog.Provider and is safe for
// concurrent use.
type Plugin struct {
	rt       *Runtime
	mod      *Module
	key      engineKey      // the engine and limits its code is compiled for
	cm       CompiledModule // its code, one reference of the runtime's; nil asleep (guarded by mu once loaded)
	cfg      Config
	engine   string
	name     string
	manifest *abi.Manifest
	caps     *capSet
	log      *slog.Logger
	obs      Observer
	// ungranted says, per abi.Capabilities index, whether a call denied
	// for want of that grant has been logged (once per plugin).
	ungranted [len(abi.Capabilities)]atomic.Bool
	// egress remembers the HTTP destinations whose refusal was logged.
	egress egressLog

	// create makes an instance; tests replace it to hold a creation.
	create func(context.Context, CompiledModule) (*instance, error)

	mu          sync.Mutex // guards the pool (pool.go)
	idle        []idleInstance
	waiters     []*waiter
	live        int
	creating    int
	shut        bool
	reaper      *time.Timer
	reapArmed   bool
	life        string      // LifeHot, LifeSleeping or LifeWaking (life.go)
	sleeper     *time.Timer // the sleep check, while hot
	wakes       atomic.Int64
	sleeps      atomic.Int64
	drained     chan struct{} // closed once shut and every instance is closed
	drainedSent bool

	done    chan struct{}
	closed  atomic.Bool
	closing sync.Once
	bg      sync.WaitGroup

	now         func() time.Time // the clock of quarantine and idleness; tests replace it
	qmu         sync.Mutex
	failures    int
	okReset     int // failures cleared by the last success (see RejectOutput)
	quarantined bool
	until       time.Time
	backoff     time.Duration
}

// Load starts a plugin of a compiled module (whose shape Compile checked)
// under cfg. A module not yet described is instantiated once, asked to
// describe itself with no capabilities, and its manifest validated (and
// kept on the module); a described one is not asked again, and its
// described instance serves when it runs under cfg's engine and memory
// limit. Load then links the granted capabilities and starts the instance
// pool with one warm instance (more are created when calls wait; see
// pool.go). A plugin that may sleep (cfg.SleepAfter) of a module that
// holds no code (Open from the metadata cache, or a module whose first
// plugin took its code) starts asleep instead, compiling nothing.
func (r *Runtime) Load(ctx context.Context, m *Module, cfg Config) (*Plugin, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := r.newPlugin(m, cfg)
	var in *instance
	if man := m.Manifest(); man == nil {
		if in, err = p.describe(ctx); err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.raw = nil // for the metadata cache, which only Open fills
		m.mu.Unlock()
	} else {
		p.setManifest(man)
		if in = m.takeSpare(p.key); in != nil {
			// The spare's reference to its code becomes the plugin's.
			in.state.p = p
			cm, err := m.code(ctx, p.key) // held by the spare: no compile
			r.releaseCode(p.key, m.digest)
			if err != nil {
				in.close(ctx)
				return nil, p.fail("compile: %w", err)
			}
			p.cm = cm
		} else if cfg.SleepAfter > 0 && !m.pinned() {
			// Nothing compiled for it (a description from the metadata
			// cache, or code released since): nothing to compile until a
			// call comes. A module just compiled is loaded hot, as it
			// would be with the described instance.
			p.life = LifeSleeping
		} else {
			cm, err := m.code(ctx, p.key)
			if err != nil {
				return nil, p.fail("compile: %w", err)
			}
			if in, err = p.create(ctx, cm); err != nil {
				r.releaseCode(p.key, m.digest)
				return nil, p.fail("%w", firstLine(err)) // the class already says instantiate
			}
			p.cm = cm
		}
	}
	caps, err := r.newCapSet(p)
	if err != nil {
		if in != nil {
			in.close(ctx)
			r.releaseCode(p.key, m.digest)
		}
		return nil, &Error{Plugin: p.name, Class: ClassInstantiate, Err: err}
	}
	p.caps = caps
	if in != nil {
		p.obs.Instance(p.name, true, "")
		p.live = 1
		p.idle = append(p.idle, idleInstance{in: in, since: p.now()})
		p.mu.Lock()
		p.armSleepLocked()
		p.mu.Unlock()
	}
	m.unpin()
	return p, nil
}

// newPlugin returns a plugin of m under cfg (after withDefaults), with no
// manifest, instance or capabilities yet.
func (r *Runtime) newPlugin(m *Module, cfg Config) *Plugin {
	src := cfg.Source
	if src == "" {
		src = "sha256:" + m.digest[:12]
	}
	key := r.keyFor(cfg)
	p := &Plugin{
		rt:      r,
		mod:     m,
		key:     key,
		life:    LifeHot,
		cfg:     cfg,
		engine:  key.name,
		name:    src,
		log:     r.log.With("plugin", src),
		obs:     r.obs,
		now:     time.Now,
		done:    make(chan struct{}),
		drained: make(chan struct{}),
	}
	p.create = p.newInstance
	return p
}

// fail is a load failure of the plugin, of class instantiate.
func (p *Plugin) fail(format string, args ...any) error {
	return &Error{Plugin: p.name, Class: ClassInstantiate, Err: fmt.Errorf(format, args...)}
}

// setManifest names the plugin by its manifest.
func (p *Plugin) setManifest(man *abi.Manifest) {
	p.manifest = man
	p.name = man.Name
	p.log = p.rt.log.With("plugin", man.Name)
}

// describe instantiates the module (its code referenced by p.cm once it
// returns), checks its ABI marker, runs describe with no capabilities and
// records the validated manifest on p and on the module. The instance it
// returns has run describe.
func (p *Plugin) describe(ctx context.Context) (*instance, error) {
	m := p.mod
	cm, err := m.code(ctx, p.key)
	if err != nil {
		return nil, p.fail("compile: %w", err)
	}
	in, err := p.create(ctx, cm)
	if err != nil {
		p.rt.releaseCode(p.key, m.digest)
		return nil, p.fail("%w", firstLine(err)) // the class already says instantiate
	}
	fail := func(format string, args ...any) (*instance, error) {
		in.close(ctx)
		p.rt.releaseCode(p.key, m.digest)
		return nil, p.fail(format, args...)
	}
	minor, err := in.marker(ctx)
	if err != nil {
		return fail("%s: %w", abi.ExportMarker, firstLine(err))
	}
	if minor > abi.Minor {
		p.log.Info("plugin built for a newer ABI minor", "guest_minor", minor, "host_minor", abi.Minor)
	}
	res, class, err := in.call(ctx, catalog.Call{Op: abi.OpDescribe, Request: describeRequest}, nil)
	if err == nil && res.Status != abi.StatusOK {
		class, err = ClassBadOutput, describeRefused(res.Status, res.Body)
	}
	if err != nil {
		err = firstLine(err)
		if class == ClassTrap {
			err = fmt.Errorf("%w (describe runs once at load, with no capabilities; a guest that traps there never loads)", err)
		}
		if stderr := in.stderr.String(); stderr != "" {
			err = fmt.Errorf("%w; stderr: %s", err, stderr)
		}
		return fail("describe: %s: %w", class, err)
	}
	man, unknown, err := parseManifest(res.Body)
	if err != nil {
		return fail("describe: %w", err)
	}
	p.setManifest(man)
	if len(unknown) > 0 {
		p.log.Warn("plugin requests unknown capabilities; ignored", "capabilities", unknown)
	}
	m.mu.Lock()
	if m.manifest == nil {
		m.manifest, m.minor, m.raw = man, minor, slices.Clone(res.Body)
	}
	m.mu.Unlock()
	p.cm = cm
	return in, nil
}

// Name is the plugin's name from its manifest.
func (p *Plugin) Name() string { return p.name }

// Manifest returns the validated manifest. Callers must not modify it.
func (p *Plugin) Manifest() *abi.Manifest { return p.manifest }

// Engine is the name of the engine that runs the plugin.
func (p *Plugin) Engine() string { return p.engine }

// Digest implements catalog.Provider: the sha256 (hex) of the plugin file.
func (p *Plugin) Digest() string { return p.mod.digest }

// Source is the file name given in Config.Source.
func (p *Plugin) Source() string { return p.cfg.Source }

// Granted returns the capabilities both requested and granted.
func (p *Plugin) Granted() []string { return p.caps.names() }

// Quarantined reports whether the plugin is refusing calls, and until when.
func (p *Plugin) Quarantined() (bool, time.Time) {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if p.quarantined && p.now().Before(p.until) {
		return true, p.until
	}
	return false, time.Time{}
}

// Call implements catalog.Provider: it runs one operation on a pooled
// instance. The Result is the guest's status and payload (a declared
// failure is abi.StatusError, not an error); every host-level failure is
// an *Error naming the plugin.
func (p *Plugin) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	start := time.Now()
	ctx, span := tracer.Start(ctx, "plugin.call")
	defer span.End()
	var t callTimes
	res, class, err := p.call(ctx, c, &t)
	p.obs.Call(p.name, c.Op.String(), time.Since(start), class)
	p.record(class)
	if span.IsRecording() {
		// The error class only when the call did not succeed, a guest's
		// declared failure included (OpenTelemetry's error.type likewise):
		// each attribute costs its export a few µs (BenchmarkExport).
		attrs := append(make([]attribute.KeyValue, 0, 6), trace.Plugin.String(p.name), trace.Engine.String(p.engine),
			trace.Op.String(c.Op.String()))
		if class != ClassOK {
			attrs = append(attrs, trace.ErrorClass.String(string(class)))
		}
		if t.waited {
			attrs = append(attrs, trace.InstanceWait.Int64(t.wait.Microseconds()))
		}
		if t.ran {
			attrs = append(attrs, trace.GuestTime.Int64(t.guest.Microseconds()))
		}
		span.SetAttributes(attrs...)
		if err != nil {
			span.SetStatus(codes.Error, string(class))
		}
	}
	if err != nil {
		err = &Error{Plugin: p.name, Op: c.Op, Class: class, Err: err}
	}
	return res, err
}

// callTimes is where one call spent its time, for its span: the wait for
// an instance (also when it timed out) and the guest's run, each only if
// the call got that far.
type callTimes struct {
	waited, ran bool
	wait, guest time.Duration
}

func (p *Plugin) call(ctx context.Context, c catalog.Call, t *callTimes) (catalog.Result, ErrorClass, error) {
	if p.closed.Load() {
		return catalog.Result{}, ClassClosed, ErrClosed
	}
	if q, until := p.Quarantined(); q {
		return catalog.Result{}, ClassQuarantined, fmt.Errorf("%w, until %s", ErrQuarantined, until.Format(time.RFC3339))
	}
	if len(c.Request) > p.cfg.Limits.MaxRequestBytes {
		return catalog.Result{}, ClassRequest, fmt.Errorf("request of %d bytes is over the limit of %d", len(c.Request), p.cfg.Limits.MaxRequestBytes)
	}
	start := time.Now()
	in, class, err := p.acquire(ctx, c.Timeout, c.MayDefer) // a call's budget bounds its wait too
	t.waited, t.wait = true, time.Since(start)
	if err != nil {
		return catalog.Result{}, class, err
	}
	if err := ctx.Err(); err != nil { // do not spend an instance on a call nobody awaits
		p.release(in)
		return catalog.Result{}, ClassCanceled, err
	}
	start = time.Now()
	res, class, err := in.call(ctx, c, p.caps) // its host calls are events of the call's span
	t.ran, t.guest = true, time.Since(start)
	switch class {
	case ClassOK, ClassGuestError:
		if in.calls >= p.cfg.Limits.MaxCallsPerInstance {
			p.discard(in, "recycle")
		} else {
			p.release(in)
		}
	default:
		if tail := in.stderr.String(); tail != "" {
			p.log.Warn("plugin instance failed", "op", c.Op.String(), "class", string(class), "err", err, "stderr", tail)
		} else {
			p.log.Warn("plugin instance failed", "op", c.Op.String(), "class", string(class), "err", err)
		}
		p.discard(in, string(class))
	}
	return res, class, err
}

// record updates the failure count and the quarantine state.
func (p *Plugin) record(class ErrorClass) {
	if class != ClassOK && class != ClassGuestError && !class.Failure() {
		return
	}
	p.qmu.Lock()
	now := p.now()
	defer p.qmu.Unlock()
	if !class.Failure() {
		p.okReset = p.failures
		p.failures = 0
		if p.quarantined {
			p.quarantined = false
			p.backoff = 0
			p.log.Info("plugin left quarantine")
			p.obs.Quarantine(p.name, false)
		}
		return
	}
	p.failures++
	if p.failures < p.cfg.Limits.FailureThreshold || (p.quarantined && now.Before(p.until)) {
		return
	}
	if p.backoff == 0 {
		p.backoff = p.cfg.Limits.Quarantine
	} else {
		p.backoff = min(2*p.backoff, p.cfg.Limits.MaxQuarantine)
	}
	p.until = now.Add(p.backoff)
	p.log.Warn("plugin quarantined", "failures", p.failures, "for", p.backoff.String())
	if !p.quarantined {
		p.quarantined = true
		p.obs.Quarantine(p.name, true)
	}
}

// Close stops the plugin: new calls fail, in-flight calls finish (until
// ctx is done), and every instance is closed.
func (p *Plugin) Close(ctx context.Context) error {
	var err error
	p.closing.Do(func() {
		p.closed.Store(true)
		if cerr := p.shutdown(ctx); cerr != nil {
			err = fmt.Errorf("plugin %s: close: %w", p.name, cerr)
		} else {
			p.bg.Wait()
		}
		p.mu.Lock()
		cm := p.cm
		if err == nil {
			p.cm = nil
		}
		p.mu.Unlock()
		if err == nil && cm != nil {
			p.rt.releaseCode(p.key, p.mod.digest)
		}
		err = errors.Join(err, p.caps.close())
		p.rt.rel.note()
	})
	return err
}

var _ catalog.Provider = (*Plugin)(nil)
