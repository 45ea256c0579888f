package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	cm       CompiledModule
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
	create func(context.Context) (*instance, error)

	mu          sync.Mutex // guards the pool (pool.go)
	idle        []idleInstance
	waiters     []*waiter
	live        int
	creating    int
	shut        bool
	reaper      *time.Timer
	reapArmed   bool
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

// Load instantiates a compiled module (whose shape Compile checked) once,
// asks it to describe itself with no capabilities, validates the manifest,
// links the granted capabilities and starts the instance pool with that
// one warm instance (more are created when calls wait; see pool.go).
func (r *Runtime) Load(ctx context.Context, m *Module, cfg Config) (*Plugin, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	src := cfg.Source
	if src == "" {
		src = "sha256:" + m.digest[:12]
	}
	fail := func(format string, args ...any) error {
		return &Error{Plugin: src, Class: ClassInstantiate, Err: fmt.Errorf(format, args...)}
	}
	key := r.keyFor(cfg)
	cm, err := m.compiledFor(ctx, key)
	if err != nil {
		return nil, fail("compile: %w", err)
	}
	p := &Plugin{
		rt:      r,
		mod:     m,
		cm:      cm,
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
	in, err := p.create(ctx)
	if err != nil {
		return nil, fail("%w", firstLine(err)) // the class already says instantiate
	}
	minor, err := in.marker(ctx)
	if err != nil {
		in.close(ctx)
		return nil, fail("%s: %w", abi.ExportMarker, firstLine(err))
	}
	if minor > abi.Minor {
		p.log.Info("plugin built for a newer ABI minor", "guest_minor", minor, "host_minor", abi.Minor)
	}
	res, class, err := in.call(ctx, catalog.Call{Op: abi.OpDescribe, Request: describeRequest}, nil)
	if err == nil && res.Status != abi.StatusOK {
		class, err = ClassBadOutput, describeRefused(res.Status, res.Body)
	}
	if err != nil {
		in.close(ctx)
		err = firstLine(err)
		if class == ClassTrap {
			err = fmt.Errorf("%w (describe runs once at load, with no capabilities; a guest that traps there never loads)", err)
		}
		if stderr := in.stderr.String(); stderr != "" {
			err = fmt.Errorf("%w; stderr: %s", err, stderr)
		}
		return nil, fail("describe: %s: %w", class, err)
	}
	man, unknown, err := parseManifest(res.Body)
	if err != nil {
		in.close(ctx)
		return nil, fail("describe: %w", err)
	}
	if len(unknown) > 0 {
		p.log.Warn("plugin requests unknown capabilities; ignored", "capabilities", unknown)
	}
	p.manifest = man
	p.name = man.Name
	p.log = r.log.With("plugin", man.Name)
	caps, err := r.newCapSet(p)
	if err != nil {
		in.close(ctx)
		return nil, &Error{Plugin: man.Name, Class: ClassInstantiate, Err: err}
	}
	p.caps = caps
	p.obs.Instance(p.name, true, "")
	p.live = 1
	p.idle = append(p.idle, idleInstance{in: in, since: p.now()})
	return p, nil
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
		attrs := append(make([]attribute.KeyValue, 0, 6), trace.Plugin.String(p.name), trace.Engine.String(p.engine),
			trace.Op.String(c.Op.String()), trace.ErrorClass.String(string(class)))
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
	in, class, err := p.acquire(ctx, c.Timeout) // a call's budget bounds its wait too
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
		err = errors.Join(err, p.caps.close())
	})
	return err
}

var _ catalog.Provider = (*Plugin)(nil)
