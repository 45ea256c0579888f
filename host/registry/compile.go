package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// compilePool bounds the compiles that burn CPU at once. A compile that
// outlives the budget is abandoned: wazero cannot interrupt a compile
// inside one function, so its goroutine runs on and its result is
// discarded. An abandoned compile gives its slot back while fewer than
// the pool's size of them are still running, so a few slow files never
// hold up the rest; past that it keeps its slot, so the CPU they burn
// stays bounded (at most twice the pool's size of compiles at once).
type compilePool struct {
	slots     chan struct{}
	abandoned chan struct{}
	budget    time.Duration
}

func newCompilePool(workers int, budget time.Duration) *compilePool {
	return &compilePool{
		slots:     make(chan struct{}, workers),
		abandoned: make(chan struct{}, workers),
		budget:    budget,
	}
}

// errBudget is the cause of a compile abandoned at the budget.
var errBudget = errors.New("compile abandoned")

// compile runs l.Compile (with probe's settings) in a slot, for at most
// the budget. It gives up
// early when ctx is done or stop is closed (the registry closing).
func (p *compilePool) compile(ctx context.Context, stop <-chan struct{}, l Loader, path string, data []byte, digest string, probe config.Plugin, began func()) (Module, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-stop:
		return nil, errors.New("registry: closed")
	}
	began()
	type result struct {
		m   Module
		err error
	}
	done := make(chan result, 1)
	go func() {
		// An abandoned compile may outlive the runtime it compiles for
		// (closed at shutdown), which wazero answers with a panic.
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("compile panicked: %v", v)}
			}
		}()
		m, err := l.Compile(ctx, path, data, digest, probe)
		done <- result{m, err}
	}()
	t := time.NewTimer(p.budget)
	defer t.Stop()
	var why error
	select {
	case res := <-done:
		<-p.slots
		return res.m, res.err
	case <-t.C:
		why = fmt.Errorf("%w after %v (plugins.compile.timeout)", errBudget, p.budget)
	case <-ctx.Done():
		why = ctx.Err()
	case <-stop:
		why = errors.New("registry: closed")
	}
	release := func() { <-p.slots }
	select {
	case p.abandoned <- struct{}{}:
		<-p.slots
		release = func() { <-p.abandoned }
	default: // as many abandoned as slots: this one keeps its slot
	}
	go func() {
		defer release()
		if res := <-done; res.m != nil {
			_ = res.m.Close(context.Background())
		}
	}()
	return nil, why
}

// compileJob is one settled file being read and compiled, off the scan:
// its outcome is applied (settled with the rest) as soon as it is ready
// (see settleFreshLocked for what waits for a new file's claims).
type compileJob struct {
	f     *file
	st    stamp
	cur   string           // digest of the version the registry holds for the file, "" if none (unknown claims)
	cfg   *config.Config   // the configuration the scan saw
	idx   *config.Bindings // its bindings
	start time.Time
	stale bool // the file changed again while the job ran: scan again after it
	// digest is the content's, once read and hashed ("" before), set
	// under the registry's lock: with it, whether a binding may select
	// the file is known before its compile ends (config.Bindings.MayBind).
	digest string
	done   chan struct{} // closed once the outcome is applied and reported
	out    outcome
	prog   *progress
}

// outcome is what reading and compiling a file gave.
type outcome struct {
	settled bool   // false: the file changed or vanished while read; retry later
	digest  string // of the content read
	touched bool   // same content as the version held: nothing to compile
	skipped string // the plugin whose binding disables the content: not compiled
	err     error  // why the content fails to load
	next    *loaded
}

// load reads and compiles the job's file, without instantiating it: what
// runs, and with which grants, is settled once the outcome is applied. It
// touches no registry state, so it runs without the registry's lock.
func (r *Registry) load(ctx context.Context, j *compileJob) outcome {
	path, st, cfg := j.f.path, j.st, j.cfg
	pols, perr := r.policies(cfg)
	// The digest, from the record when the file is the one hashed before
	// and no signature must be checked against its bytes (digests.go);
	// else read and hashed.
	var data []byte
	o := outcome{settled: true}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return outcome{}
	}
	id, idOK := fileID{}, false
	if err == nil {
		id, idOK = fileIDOf(fi)
	}
	if idOK && perr == nil && !pols.Any() {
		o.digest = r.digests.lookup(path, id)
	}
	if o.digest == "" {
		readAt := time.Now()
		data, err = os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return outcome{}
			}
			return outcome{settled: true, err: fmt.Errorf("%w: read: %w", plugin.ErrHost, err)}
		}
		sum := sha256.Sum256(data)
		o.digest = hex.EncodeToString(sum[:])
		if idOK {
			if fi, err := os.Stat(path); err == nil {
				if now, ok := fileIDOf(fi); ok && now == id {
					r.digests.record(path, id, o.digest, readAt)
				}
			}
		}
	}
	if !r.unchanged(path, st) {
		return outcome{}
	}
	r.hashed(ctx, j, o.digest)
	// The binding, from the path and digest alone, then the signature,
	// before compiling (and before trusting the version held: the policy
	// or the signature may be what changed).
	name, err := preBind(cfg, j.idx, path, o.digest)
	if err != nil && j.cur != o.digest {
		o.err = err
		return o
	}
	if perr != nil {
		o.err = fmt.Errorf("%w: trust policy: %w", plugin.ErrHost, perr)
		return o
	}
	chk, err := NewTrustCheck(pols, path, data, o.digest)
	if err == nil {
		err = chk.Check(name)
	}
	if err != nil {
		o.err = err
		return o
	}
	if j.cur == o.digest {
		// Touched, not changed: settlement applies any settings change.
		o.touched = true
		return o
	}
	if name != "" && !cfg.PluginSettings(name).Enabled {
		o.skipped = name
		return o
	}
	mod, err := r.pool.compile(ctx, r.closing, r.opts.Loader, path, data, o.digest, probeSettings(cfg, j.idx, name), func() { j.prog.began(path) })
	if err != nil {
		if !r.unchanged(path, st) {
			return outcome{} // still being written: not yet
		}
		o.err = fmt.Errorf("compile: %w", err)
		return o
	}
	m := mod.Manifest()
	if _, err := bindCheck(cfg, j.idx, path, o.digest, m.Name); err != nil {
		_ = mod.Close(ctx)
		o.err = err
		return o
	}
	if err := chk.Check(m.Name); err != nil {
		_ = mod.Close(ctx)
		o.err = err
		return o
	}
	if err := catalog.Check(manifestOnly{m}); err != nil {
		_ = mod.Close(ctx)
		o.err = fmt.Errorf("plugin %s: %w", m.Name, err)
		return o
	}
	o.next = &loaded{path: path, digest: o.digest, module: mod, manifest: m, signer: chk.Signer()}
	return o
}

// runJob loads the job's file, then applies the outcome: the file's state,
// and a settlement of every file with the new version among them.
func (r *Registry) runJob(ctx context.Context, j *compileJob) {
	defer r.jobs.Done()
	o := r.load(ctx, j)
	r.mu.Lock()
	evs := r.finishLocked(ctx, j, o)
	var present map[string]*file
	if len(r.inflight) == 0 {
		present = maps.Clone(r.files) // the last compile: record the digests
	}
	r.mu.Unlock()
	if present != nil {
		r.digests.flush(func(path string) bool { return present[path] != nil })
	}
	r.emit(evs)
	if j.prog != nil {
		j.prog.step(j.f.path)
	}
	close(j.done)
	r.mu.Lock()
	r.signalLocked()
	r.mu.Unlock()
}

// finishLocked applies a job's outcome and returns the events to emit.
func (r *Registry) finishLocked(ctx context.Context, j *compileJob, o outcome) []Event {
	j.out = o
	f := j.f
	if r.inflight[f.path] == j {
		delete(r.inflight, f.path)
		if j.cur == "" {
			r.newcomers--
		}
	}
	if r.closed || r.files[f.path] != f {
		// Closed, or the file went away meanwhile.
		if o.next != nil {
			_ = o.next.module.Close(ctx)
		}
		return nil
	}
	if j.stale || !o.settled {
		f.pending = !o.settled
		r.Trigger()
	}
	if !o.settled {
		return nil
	}
	f.pending = false
	r.scanErrs = nil
	f.digest, f.skipped = o.digest, o.skipped
	switch {
	case refusedByTrust(o.err):
		f.seen, f.failure = j.st, o.err
		r.scanErrs = append(r.scanErrs, o.err)
		r.log.Error("plugin file refused: its signature does not satisfy the trust policy; no version of it serves", "file", f.path, "err", o.err)
	case o.err != nil:
		r.fail(f, j.st, o.err)
	default:
		f.seen, f.failure = j.st, nil
		if o.skipped != "" {
			r.log.Info("plugin disabled by the configuration; not compiled", "file", f.path, "plugin", o.skipped)
		}
	}
	if o.next != nil {
		r.fresh[f.path] = o.next
	}
	// A new version that only waits for the newcomers' claims changes
	// nothing that serves; anything else (a failure, a skip, a file with
	// a version held) may.
	r.settleFreshLocked(ctx, j.start, o.next == nil || r.version(f.path) != nil)
	r.readyLocked()
	evs := r.events
	r.events = nil
	return evs
}

// hashed records the digest of a new file's content on its job. If that
// shows that no binding can select the file, what waited only because it
// might (settleFreshLocked, readiness) goes on at once, without waiting
// for the compile.
func (r *Registry) hashed(ctx context.Context, j *compileJob, digest string) {
	if j.cur != "" {
		return // a new version of a file held: nothing waits for it
	}
	r.mu.Lock()
	cfg := r.cfg.Load()
	idx, _ := r.bindingsLocked(cfg)
	was := idx.MayBind(j.f.path, j.digest)
	j.digest = digest
	var evs []Event
	if was && !idx.MayBind(j.f.path, digest) && !r.closed {
		r.scanErrs = nil
		r.settleFreshLocked(ctx, j.start, true)
		r.readyLocked()
		r.signalLocked()
		evs = r.events
		r.events = nil
	}
	r.mu.Unlock()
	r.emit(evs)
}

// probeSettings are the settings a file is first instantiated under
// (config.Config.ProbeSettings), from idx, the index of cfg.
func probeSettings(cfg *config.Config, idx *config.Bindings, bound string) config.Plugin {
	if bound != "" {
		return cfg.PluginSettings(bound)
	}
	return idx.Probe()
}

// settleFreshLocked settles the files with the versions compiled since
// the last settlement, as far as the new files still compiling (whose
// claims are unknown) allow, so that no load timing decides who owns
// anything:
//
//   - While one of them may be bound (Bindings.MayBind), nothing settles: a
//     bound newcomer contests every claim, bound or not (two bound
//     claimants are both refused), so settling without it could start a
//     claimant with grants or a scheme that its arrival takes away again.
//   - While only unbound ones compile, bound plugins settle at once: an
//     unbound newcomer can take nothing from them. Unbound plugins wait,
//     both a new version and a start (or restart) of one held or serving:
//     two unbound claimants of one thing are both refused, so no unbound
//     plugin may start before every rival's claims are known. Refusals
//     apply at once, as no newcomer can lift them.
//
// A compile lasts at most Options.CompileTimeout, and a file refused
// before compiling (plugins.compile limits) settles at once.
//
// The waiting versions are checked once, not again with every compile
// that lands, and a landing that only adds one to them settles nothing
// (dirty false: nothing else changed since the last settlement), so a
// first load of n plugins costs O(n) checks, not O(n²).
func (r *Registry) settleFreshLocked(ctx context.Context, start time.Time, dirty bool) {
	cfg := r.cfg.Load()
	unknown, bound := r.newcomersLocked(cfg)
	if bound {
		return
	}
	if !unknown || cfg != r.waitingCfg {
		// The newcomers' claims are known, or the waiting versions were
		// checked against another configuration: all of them again. A
		// newer version of the same file wins.
		for path, l := range r.waiting {
			if n := r.fresh[path]; n != nil {
				if n.module != l.module {
					_ = l.module.Close(ctx)
				}
				continue
			}
			r.fresh[path] = l
		}
		clear(r.waiting)
		r.waitingCfg = cfg
	}
	idx, _ := r.bindingsLocked(cfg)
	fresh := r.fresh
	r.fresh = map[string]*loaded{}
	for path, l := range fresh {
		if f := r.files[path]; f == nil || f.digest != l.digest {
			_ = l.module.Close(ctx) // removed or changed again meanwhile
			delete(fresh, path)
			continue
		}
		if bound, err := bindCheck(cfg, idx, path, l.digest, l.manifest.Name); unknown && !bound && err == nil {
			if w := r.waiting[path]; w != nil && w.module != l.module {
				_ = w.module.Close(ctx) // an older version of the file
			}
			r.waiting[path] = l // unbound: waits for the newcomers' claims
			delete(fresh, path)
		}
	}
	if unknown && len(fresh) == 0 && !dirty {
		return // nothing new to settle: the last settlement stands
	}
	r.settledWith = cfg
	if unknown {
		r.settledWith = nil // unbound plugins wait: settle again on the next scan
	}
	r.settleLocked(ctx, cfg, fresh, start, unknown)
}

// waitingLocked reports whether readiness (and Load) still waits for a
// compile: a compiled version waits to be settled (settleFreshLocked), a
// new file is compiling that the configuration may bind, or any new file
// is, unless it is the only one and the configuration binds some plugin.
// The bound plugins are then the ones the operator relies on, and no
// other plugin waits for that file (an unbound one would wait, and would
// hold readiness itself): the file is applied when its compile ends,
// like a file added later.
func (r *Registry) waitingLocked() bool {
	if len(r.fresh)+len(r.waiting) > 0 {
		return true
	}
	cfg := r.cfg.Load()
	unknown, bound := r.newcomersLocked(cfg)
	if _, binds := r.bindingsLocked(cfg); !binds || bound {
		return unknown
	}
	return r.newcomers > 1
}

// newcomersLocked reports whether a new file (no version held: its claims
// are unknown) is still compiling, and whether one is that cfg may bind.
// Without a binding in cfg it costs nothing per file.
func (r *Registry) newcomersLocked(cfg *config.Config) (unknown, bound bool) {
	if r.newcomers == 0 {
		return false, false
	}
	idx, binds := r.bindingsLocked(cfg)
	if !binds {
		return true, false
	}
	for _, j := range r.inflight {
		if j.cur == "" && idx.MayBind(j.f.path, j.digest) {
			return true, true
		}
	}
	return true, false
}

// bindingsLocked returns the index of cfg's bindings, and whether cfg
// binds any plugin, computed once per configuration.
func (r *Registry) bindingsLocked(cfg *config.Config) (*config.Bindings, bool) {
	if cfg != r.bindingsCfg {
		r.bindingsCfg, r.bindings, r.binds = cfg, cfg.Bindings(), false
		for _, p := range cfg.Plugin {
			r.binds = r.binds || p.Binding.Bound()
		}
	}
	return r.bindings, r.binds
}

// readyLocked marks the registry ready once no file is still changing
// and nothing waits for a compile (waitingLocked).
func (r *Registry) readyLocked() {
	if !r.scanPending && !r.waitingLocked() {
		r.ready.Store(true)
	}
}

// signalLocked wakes whoever waits for a compile's outcome (Load).
func (r *Registry) signalLocked() {
	close(r.landed)
	r.landed = make(chan struct{})
}

// manifestOnly is a provider known by its manifest alone, to check a
// manifest's claims on their own before anything runs.
type manifestOnly struct{ m *abi.Manifest }

func (p manifestOnly) Manifest() *abi.Manifest    { return p.m }
func (p manifestOnly) Digest() string             { return "" }
func (p manifestOnly) RejectOutput(abi.Op, error) {}
func (p manifestOnly) Call(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, errors.New("registry: not instantiated")
}

var _ catalog.Provider = manifestOnly{}
