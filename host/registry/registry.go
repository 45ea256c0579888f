package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/trust"
)

// Options configure a Registry.
type Options struct {
	// Dir is the plugin directory; its *.wasm files are served. Files whose
	// name starts with "." are ignored (editors' and copiers' temporaries).
	Dir string
	// Loader compiles plugin files. Required.
	Loader Loader
	// Config supplies per-plugin settings (by manifest name); nil gives
	// every plugin config.DefaultPlugin(). Replace it with UpdateConfig.
	Config *config.Config
	// SetOptions are passed to catalog.NewSet for every Set.
	SetOptions catalog.Options
	// Debounce is how long a file must stay unchanged before it is loaded,
	// and how long events are gathered before a scan (default 250ms).
	Debounce time.Duration
	// Rescan is the period of the safety-net rescan (default 30s; negative
	// disables it).
	Rescan time.Duration
	// DrainGrace is how long a retired Set stays usable before its plugins
	// are closed, for requests that loaded it just before the swap
	// (default 1s). DrainTimeout caps the wait for calls still in flight
	// after that (default 30s).
	DrainGrace   time.Duration
	DrainTimeout time.Duration
	// Logger receives load and reload outcomes; nil discards them.
	Logger *slog.Logger
	// Observer receives reload metrics; nil records nothing.
	Observer Observer
	// OnChange is called after every swap that added, removed or replaced
	// a plugin, from the goroutine that scanned, once the scan is over.
	OnChange func(Event)
	// Progress, when set, is called as the files a scan started compiling
	// are done: done of total. Whether or not it is set, a scan of more
	// than one file logs each file as it is ready (n of m, how long it
	// took), and every scan logs the slowest compile still running every
	// ProgressEvery (default 5s) until all are done.
	Progress      func(done, total int)
	ProgressEvery time.Duration
	// CompileWorkers bounds the compiles that run at once (default: one
	// per CPU). CompileTimeout is the wall-clock budget of one compile
	// (default 60s): a compile still running then is abandoned and the
	// file refused.
	CompileWorkers int
	CompileTimeout time.Duration
	// DigestFile, when set, is where the registry records the sha256 of
	// every plugin file by the file's identity (device, inode, size,
	// modification and change time), so that a start over unchanged files
	// reads none of them (digests.go says when a record is trusted); ""
	// reads and hashes every file on every load.
	DigestFile string
}

// DefaultCompileTimeout is the wall-clock budget of one compile when
// Options.CompileTimeout is not set: the bundled Go guests compile in
// 1–2 s on an idle machine and about 10 s on a loaded 2-CPU one.
const DefaultCompileTimeout = 60 * time.Second

// Observer receives the registry's metrics. Implementations must be safe
// for concurrent use and must not block.
type Observer interface {
	// Reload reports one attempt to change the served set: whether every
	// change was applied, and how long it took.
	Reload(ok bool, d time.Duration)
	// Plugins reports how many plugins are serving and how many files are
	// failing to load.
	Plugins(serving, failed int)
}

// Event reports a swap of the served set.
type Event struct {
	// Generation is the new Set's id.
	Generation string
	// Resources, Prompts and Tools say which lists may have changed
	// (resources include resource templates).
	Resources, Prompts, Tools bool
	// Added, Removed and Replaced name the plugins that changed.
	Added, Removed, Replaced []string
}

// Registry keeps a catalog in step with a plugin directory.
type Registry struct {
	opts Options
	log  *slog.Logger
	cat  *catalog.Catalog
	cfg  atomic.Pointer[config.Config]

	kick     chan struct{}
	closing  chan struct{} // closed by Close
	ready    atomic.Bool
	hostFail atomic.Pointer[string] // why a file fails for a host reason; nil when none does

	pool    *compilePool
	jobs    sync.WaitGroup // compile jobs not yet applied
	digests *digests       // the digest record (Options.DigestFile)

	mu        sync.Mutex // serializes scans and the outcomes of compiles; guards the fields below
	files     map[string]*file
	inflight  map[string]*compileJob // path → the file's compile in progress
	newcomers int                    // jobs in inflight of files with no version held
	// bindings indexes the bindings of bindingsCfg; binds says whether
	// it binds any plugin.
	bindingsCfg *config.Config
	bindings    *config.Bindings
	binds       bool
	fresh       map[string]*loaded // path → version compiled since the last settlement
	// waiting are unbound versions settled once the claims of the new
	// files still compiling are known (settleFreshLocked), as checked
	// against waitingCfg.
	waiting     map[string]*loaded
	waitingCfg  *config.Config
	landed      chan struct{}      // closed (and replaced) as compiles' outcomes are applied
	scanPending bool               // the last scan found a file still changing
	serving     map[string]*loaded // path → version in the current Set
	held        map[string]*loaded // path → compiled version kept out by settlement
	// settledWith is the configuration of the last settlement: a scan
	// that starts no compile, removes nothing and has the same one skips it.
	settledWith *config.Config
	last        reloadStatus
	scanErrs    []error // failures of the scan or compile outcome being applied
	events      []Event // swaps of the scan or outcome being applied, emitted after it
	closed      bool
	drains      sync.WaitGroup

	trustMu   sync.Mutex // guards the compiled trust policies of trustCfg
	trustCfg  *config.Config
	trustPols *trust.Policies
	trustErr  error
}

// file is what the registry knows of one plugin file.
type file struct {
	path    string
	seen    stamp // the stamp last processed (loaded or failed)
	failure error // why the content at seen failed to load, nil if it did not
	// refusal is why settlement or a binding keeps the file's newest
	// loadable version out of the served set, nil if it serves.
	refusal error
	// skipped names the plugin whose binding disables the content at seen:
	// it was not compiled.
	skipped string
	digest  string // of the content at seen, once read
	pending bool   // changing; not processed yet
}

// stamp identifies a version of a plugin file and of the signatures beside
// it without reading them (stampOf).
type stamp struct {
	size  int64
	mtime time.Time
	sigs  [2]fileStamp // .minisig, .sigstore.json
}

// loaded is one version of a plugin: its compiled module and, unless it is
// disabled, a running instance.
type loaded struct {
	path     string
	digest   string
	module   Module
	manifest *abi.Manifest
	settings config.Plugin
	signer   string   // the trusted publisher whose signature was checked, "" when no policy applies
	plugin   *tracked // nil when disabled
	since    time.Time
	err      error // why instantiating it failed, during a settlement
}

type reloadStatus struct {
	at  time.Time
	ok  bool
	err string
}

// New returns a Registry serving an empty catalog until Scan or Run loads
// the directory.
func New(opts Options) (*Registry, error) {
	if opts.Loader == nil {
		return nil, errors.New("registry: no loader")
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 250 * time.Millisecond
	}
	if opts.Rescan == 0 {
		opts.Rescan = 30 * time.Second
	}
	if opts.DrainGrace <= 0 {
		opts.DrainGrace = time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.CompileWorkers <= 0 {
		opts.CompileWorkers = runtime.GOMAXPROCS(0)
	}
	if opts.CompileTimeout <= 0 {
		opts.CompileTimeout = DefaultCompileTimeout
	}
	empty, err := catalog.NewSet(nil, opts.SetOptions)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r := &Registry{
		opts:     opts,
		log:      opts.Logger,
		cat:      catalog.New(empty),
		kick:     make(chan struct{}, 1),
		closing:  make(chan struct{}),
		files:    map[string]*file{},
		inflight: map[string]*compileJob{},
		fresh:    map[string]*loaded{},
		waiting:  map[string]*loaded{},
		landed:   make(chan struct{}),
		pool:     newCompilePool(opts.CompileWorkers, opts.CompileTimeout),
		serving:  map[string]*loaded{},
		held:     map[string]*loaded{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.digests = openDigests(opts.DigestFile, r.log)
	cfg := opts.Config
	if cfg == nil {
		cfg = &config.Config{}
	}
	r.cfg.Store(cfg)
	return r, nil
}

// Catalog returns the catalog the registry swaps Sets into.
func (r *Registry) Catalog() *catalog.Catalog { return r.cat }

// Config returns the configuration in force (the last UpdateConfig).
func (r *Registry) Config() *config.Config { return r.cfg.Load() }

// Ready reports whether the registry serves what it should: the
// directory has been loaded (a scan found no file still changing and no
// compile readiness waits for is running, or Load returned) and no file
// fails for a reason of the host's own (plugin.ErrHost: the compilation
// cache or the file cannot be read, say), which would serve on a healthy
// host.
func (r *Registry) Ready() bool { return r.NotReady() == nil }

// NotReady returns why Ready is false, nil when it is true.
func (r *Registry) NotReady() error {
	if !r.ready.Load() {
		return errors.New("plugins not loaded yet")
	}
	if why := r.hostFail.Load(); why != nil {
		return errors.New(*why)
	}
	return nil
}

// UpdateConfig replaces the per-plugin settings and schedules a scan that
// applies them: plugins whose settings changed are re-instantiated from
// their compiled module, without recompiling.
func (r *Registry) UpdateConfig(cfg *config.Config) {
	old := r.cfg.Swap(cfg)
	recheck := config.TrustChanged(old, cfg) // every signature again, under the new policy
	r.mu.Lock()
	for _, f := range r.files {
		if recheck || f.failure != nil || f.skipped != "" {
			f.seen = stamp{} // retry: the new settings may fix or enable it
		}
	}
	r.mu.Unlock()
	r.Trigger()
}

// Trigger schedules a scan as soon as the registry's Run loop is free.
func (r *Registry) Trigger() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Scan reads the directory once, compiles every settled change and
// applies each as soon as its compile is done, returning once all are
// (a compile is bounded by Options.CompileTimeout). It reports whether
// some file is still changing (and needs another scan after Debounce).
// Errors concern the directory itself; plugin failures are in Status.
func (r *Registry) Scan(ctx context.Context) (pending bool, err error) {
	pending, jobs, err := r.startScan(ctx)
	for _, j := range jobs {
		<-j.done
		pending = pending || !j.out.settled
	}
	return pending, err
}

// startScan reads the directory once, applies what needs no compile
// (removed files, settings), and starts compiling the settled changes
// without waiting for them.
func (r *Registry) startScan(ctx context.Context) (pending bool, jobs []*compileJob, err error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false, nil, errors.New("registry: closed")
	}
	pending, jobs, err = r.scanLocked(ctx)
	r.scanPending = pending
	r.readyLocked()
	evs := r.events
	r.events = nil
	r.mu.Unlock()
	r.emit(evs)
	return pending, jobs, err
}

// emit passes events to OnChange, outside the lock, so OnChange may call
// Status.
func (r *Registry) emit(evs []Event) {
	if r.opts.OnChange != nil {
		for _, ev := range evs {
			r.opts.OnChange(ev)
		}
	}
}

// Load scans until no file is still changing (or maxWait passes), for a
// start-up that should serve every plugin present from its first request.
// It does not wait for a new unbound file still compiling that nothing
// else waits for (see waitingLocked): that file is applied when its
// compile ends, as by Run.
func (r *Registry) Load(ctx context.Context, maxWait time.Duration) error {
	deadline := time.Now().Add(maxWait)
	for {
		pending, jobs, err := r.startScan(ctx)
		if err == nil {
			var again bool
			again, err = r.await(ctx, jobs)
			pending = pending || again
		}
		if err != nil || !pending || time.Now().After(deadline) {
			r.ready.Store(true) // loaded as far as it will be
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.opts.Debounce):
		}
	}
}

// await waits until every job is done or nothing still compiling is
// awaited (waitingLocked), and reports whether a job done found its file
// still changing. Each wake-up looks only at the jobs from the first one
// not yet done, so n jobs cost O(n) looks in all.
func (r *Registry) await(ctx context.Context, jobs []*compileJob) (pending bool, err error) {
	isDone := func(j *compileJob) bool {
		select {
		case <-j.done:
			return true
		default:
			return false
		}
	}
	// unsettled reports whether a job done (from jobs[i] on) found its
	// file still changing.
	unsettled := func(i int) bool {
		for _, j := range jobs[i:] {
			if isDone(j) && !j.out.settled {
				return true
			}
		}
		return false
	}
	i := 0
	for {
		r.mu.Lock()
		for ; i < len(jobs) && isDone(jobs[i]); i++ {
			pending = pending || !jobs[i].out.settled
		}
		waiting, landed := r.waitingLocked(), r.landed
		if i == len(jobs) || !waiting {
			pending = pending || unsettled(i)
			r.mu.Unlock()
			return pending, nil
		}
		r.mu.Unlock()
		select {
		case <-landed:
		case <-ctx.Done():
			r.mu.Lock()
			pending = pending || unsettled(i)
			r.mu.Unlock()
			return pending, ctx.Err()
		}
	}
}

// dirFiles returns the plugin files of the directory, none when there is
// no directory or a lock names the set (cfg.Plugins.Lock: the directory is
// not consulted). It returns nil, nil when the directory is gone while
// plugins from it serve: nothing changes until it is back.
func (r *Registry) dirFiles(cfg *config.Config) (map[string]stamp, error) {
	present := map[string]stamp{}
	if r.opts.Dir == "" || cfg.Plugins.Lock != "" {
		return present, nil
	}
	entries, err := os.ReadDir(r.opts.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if err != nil {
		// A directory removed as a whole is an accident (or a deploy
		// half done) more often than a wish to serve nothing: keep the
		// last good set until it is back. An empty directory serves none.
		if n := len(r.serving); n > 0 {
			r.log.Warn("plugin directory is gone; the plugins loaded from it keep serving until it is back", "dir", r.opts.Dir, "plugins", n)
			return nil, nil
		}
		r.log.Warn("plugin directory does not exist; serving no plugins", "dir", r.opts.Dir)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".wasm") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(r.opts.Dir, name)
		fi, err := os.Stat(path) // follow symlinks
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		present[path] = stampOf(path, fi)
	}
	return present, nil
}

func (r *Registry) scanLocked(ctx context.Context) (bool, []*compileJob, error) {
	start := time.Now()
	r.scanErrs = nil
	cfg := r.cfg.Load()
	present, err := r.dirFiles(cfg)
	if err != nil || present == nil {
		return false, nil, err
	}
	// Plugins bound to a source (host/oci resolved them to files of its
	// store) are served from there, through the same binding and checks.
	for _, p := range cfg.Plugin {
		if p.Source == "" || p.File == "" {
			continue
		}
		if fi, err := os.Stat(p.File); err == nil && fi.Mode().IsRegular() {
			present[p.File] = stampOf(p.File, fi)
		}
	}

	pending := false
	var todo []string
	for path, st := range present {
		f := r.files[path]
		if f == nil {
			f = &file{path: path}
			r.files[path] = f
		}
		if j := r.inflight[path]; j != nil {
			j.stale = j.stale || j.st != st
			continue // compiling; its outcome applies when it is done
		}
		if f.seen == st && !errors.Is(f.failure, plugin.ErrHost) {
			f.pending = false
			continue // a host failure is retried on every scan
		}
		todo = append(todo, path)
	}
	slices.Sort(todo)
	var jobs []*compileJob
	for _, path := range todo {
		f, st := r.files[path], present[path]
		if time.Since(st.mtime) < r.opts.Debounce {
			f.pending, pending = true, true
			continue
		}
		j := &compileJob{f: f, st: st, cfg: cfg, start: start, done: make(chan struct{})}
		if cur := r.version(path); cur != nil {
			j.cur = cur.digest
		}
		f.pending = true
		jobs = append(jobs, j)
	}
	changed := cfg != r.settledWith || len(r.fresh)+len(r.waiting) > 0 // new compiles settle when they land
	for path := range r.files {
		if _, ok := present[path]; !ok {
			delete(r.files, path)
			changed = true
		}
	}
	if !changed {
		// Same files, same configuration: the settlement stands.
		r.report(len(r.scanErrs) > 0, start)
	} else {
		// Removed files and settings changes apply now (unless a new
		// file's claims are unknown); each compile's outcome when it is
		// ready.
		r.settleFreshLocked(ctx, start, true)
	}
	if len(jobs) == 0 {
		return pending, nil, nil
	}
	idx, _ := r.bindingsLocked(cfg)
	prog := newProgress(len(jobs), r.opts.Progress, r.log, r.opts.ProgressEvery, r.closing)
	for _, j := range jobs {
		r.inflight[j.f.path] = j
		if j.cur == "" {
			r.newcomers++
		}
		r.jobs.Add(1)
		j.prog, j.idx = prog, idx
		go r.runJob(ctx, j)
	}
	return pending, jobs, nil
}

// version returns the compiled version of path the registry holds, serving
// or not.
func (r *Registry) version(path string) *loaded {
	if l := r.serving[path]; l != nil {
		return l
	}
	return r.held[path]
}

func (r *Registry) unchanged(path string, st stamp) bool {
	fi, err := os.Stat(path)
	return err == nil && stampOf(path, fi) == st
}

func (r *Registry) fail(f *file, st stamp, err error) {
	f.seen, f.failure = st, err
	r.scanErrs = append(r.scanErrs, err)
	r.log.Error("plugin not loaded; the previous version (if any) keeps serving", "file", f.path, "err", err)
}

// settleLocked decides what serves from every file's newest loadable
// version (fresh ones first, else the one held), instantiates the winners
// with their settings, and swaps in the Set they form. With boundOnly,
// an unbound winner that does not serve as it is does not start yet: it
// keeps what it had (settleFreshLocked says why).
func (r *Registry) settleLocked(ctx context.Context, cfg *config.Config, fresh map[string]*loaded, start time.Time, boundOnly bool) {
	cands := map[string]*loaded{}
	for path, f := range r.files {
		if f.skipped != "" || refusedByTrust(f.failure) {
			continue // a refused signature serves no version of the file
		}
		if l := fresh[path]; l != nil {
			cands[path] = l
		} else if l := r.version(path); l != nil {
			cands[path] = l
		}
	}
	// The binding again (versions may have loaded under an older
	// configuration), then the claims.
	var list []Candidate
	for _, path := range slices.Sorted(maps.Keys(cands)) {
		l := cands[path]
		list = append(list, Candidate{Path: path, Digest: l.digest, Manifest: l.manifest})
	}
	refused := Settle(cfg, list)

	next := map[string]*loaded{}
	held := map[string]*loaded{}
	var starts []*loaded // winners to instantiate
	for path, f := range r.files {
		l := cands[path]
		if l == nil {
			r.refuse(f, nil)
			continue
		}
		if err := refused[path]; err != nil {
			held[path] = l.idle() // may serve when the files or the configuration change
			r.refuse(f, err)
			continue
		}
		r.refuse(f, nil)
		s := cfg.PluginSettings(l.manifest.Name)
		cur := r.serving[path]
		if cur != nil && cur.module == l.module && (cur.settings.Equal(s) || f.failure != nil) {
			// Unchanged, or its newest content failed: it serves as it was.
			next[path] = cur
			continue
		}
		if boundOnly && s.Enabled && !s.Binding.Bound() {
			if cur != nil {
				next[path] = cur // same module (an unbound new version is not a candidate): same claims
			} else {
				held[path] = l
			}
			continue
		}
		v := l.idle()
		v.settings, v.since = s, time.Now()
		next[path] = v
		if s.Enabled {
			starts = append(starts, v)
		}
	}
	r.instantiateAll(ctx, starts)
	for _, v := range starts {
		if v.err == nil {
			continue
		}
		if cur := r.serving[v.path]; cur != nil && cur.module == v.module {
			next[v.path] = cur // new settings that do not start: the old ones stay
		} else {
			delete(next, v.path)
		}
	}

	changes := map[string]*loaded{}
	for path, l := range next {
		if r.serving[path] != l {
			changes[path] = l
		}
	}
	for path := range r.serving {
		if next[path] == nil {
			changes[path] = nil
		}
	}
	oldHeld := r.held
	r.held = held
	if len(changes) == 0 {
		r.report(len(r.scanErrs) > 0, start)
	} else if !r.apply(changes, next, start) {
		// Keep serving what served; close what was started for nothing.
		for _, l := range changes {
			if l != nil && l.plugin != nil && (r.serving[l.path] == nil || r.serving[l.path].plugin != l.plugin) {
				_ = l.plugin.Close(ctx)
			}
		}
		next = r.serving
	}
	// Close the modules of versions that never served and that nothing
	// uses any more (apply retires those that served, after the drain).
	if len(oldHeld)+len(fresh) == 0 {
		return
	}
	used := modulesOf(next, r.held)
	for _, l := range slices.Concat(slices.Collect(maps.Values(oldHeld)), slices.Collect(maps.Values(fresh))) {
		if !used[l.module] {
			used[l.module] = true // closed once
			_ = l.module.Close(ctx)
		}
	}
}

// modulesOf returns the modules the versions in vss run from.
func modulesOf(vss ...map[string]*loaded) map[Module]bool {
	used := map[Module]bool{}
	for _, vs := range vss {
		for _, l := range vs {
			used[l.module] = true
		}
	}
	return used
}

// idle returns a copy of l with no running instance.
func (l *loaded) idle() *loaded {
	v := *l
	v.plugin, v.err = nil, nil
	return &v
}

// refuse records why settlement keeps f out (nil: it is not kept out),
// logging and counting a refusal the first time it is seen.
func (r *Registry) refuse(f *file, err error) {
	if f == nil {
		return
	}
	was := f.refusal
	f.refusal = err
	if err == nil || (was != nil && was.Error() == err.Error()) {
		return
	}
	r.scanErrs = append(r.scanErrs, err)
	r.log.Error("plugin file refused: it does not serve", "file", f.path, "err", err)
}

// instantiateAll starts the winners of a settlement with their settings,
// as many at a time as there are CPUs. A failure is recorded on the file.
func (r *Registry) instantiateAll(ctx context.Context, vs []*loaded) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, v := range vs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p, err := v.module.Instantiate(ctx, v.settings)
			if err != nil {
				v.err = fmt.Errorf("plugin %s: load: %w", v.manifest.Name, err)
				return
			}
			v.plugin = &tracked{Plugin: p, digest: v.digest}
		})
	}
	wg.Wait()
	for _, v := range vs {
		if v.err == nil {
			r.logUngranted(v)
		}
		if v.err != nil {
			f := r.files[v.path]
			f.failure = v.err
			r.scanErrs = append(r.scanErrs, v.err)
			r.log.Error("plugin not started", "file", v.path, "plugin", v.manifest.Name, "err", v.err)
		}
	}
}

// apply swaps in the Set of next, whose differences from r.serving are
// changes, and retires what it replaced. It reports false, leaving the
// served set as it was, if next does not form a Set (which settlement
// should have prevented).
func (r *Registry) apply(changes, next map[string]*loaded, start time.Time) bool {
	set, err := r.newSet(next)
	if err != nil {
		r.scanErrs = append(r.scanErrs, err)
		r.log.Error("the settled plugins do not form a valid set; the previous set keeps serving", "err", err)
		r.report(true, start)
		return false
	}
	ev := r.event(changes, set)
	r.cat.Swap(set)
	prev := r.serving
	r.serving = next
	// Retire the plugins and modules the new set no longer uses.
	var retired []*tracked
	var modules []Module
	var used map[Module]bool
	for path, l := range prev {
		n := next[path]
		if n != nil && n.plugin == l.plugin {
			continue
		}
		if l.plugin != nil {
			retired = append(retired, l.plugin)
		}
		if used == nil {
			used = modulesOf(next, r.held)
		}
		if !used[l.module] {
			used[l.module] = true // retired once
			modules = append(modules, l.module)
		}
	}
	if len(retired)+len(modules) > 0 {
		r.drains.Add(1)
		go r.drain(retired, modules)
	}
	r.log.Info("plugin set swapped", "generation", set.Generation(), "plugins", len(set.Providers()),
		"added", ev.Added, "removed", ev.Removed, "replaced", ev.Replaced)
	r.report(true, start)
	if len(ev.Added)+len(ev.Removed)+len(ev.Replaced) > 0 {
		r.events = append(r.events, ev)
	}
	return true
}

func (r *Registry) newSet(m map[string]*loaded) (*catalog.Set, error) {
	var ps []catalog.Provider
	for _, path := range slices.Sorted(maps.Keys(m)) {
		if l := m[path]; l.plugin != nil {
			ps = append(ps, l.plugin)
		}
	}
	return catalog.NewSet(ps, r.opts.SetOptions)
}

// drain waits for requests that may still use the old Set, then closes the
// plugins and modules it alone used.
func (r *Registry) drain(plugins []*tracked, modules []Module) {
	defer r.drains.Done()
	// Close cuts the grace short: the servers have stopped by then.
	select {
	case <-time.After(r.opts.DrainGrace):
	case <-r.closing:
	}
	deadline := time.Now().Add(r.opts.DrainTimeout)
	for _, p := range plugins {
		for p.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := p.inflight.Load(); n > 0 {
			r.log.Warn("closing a retired plugin with calls still in flight", "plugin", p.Manifest().Name, "calls", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := p.Close(ctx); err != nil {
			r.log.Warn("closing a retired plugin", "plugin", p.Manifest().Name, "err", err)
		}
		cancel()
	}
	for _, m := range modules {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = m.Close(ctx)
		cancel()
	}
}

// event describes the swap from r.serving to the changes.
func (r *Registry) event(changes map[string]*loaded, set *catalog.Set) Event {
	ev := Event{Generation: set.Generation()}
	touch := func(m *abi.Manifest) {
		if len(m.Resources) > 0 || len(m.Templates) > 0 || m.ListsResources {
			ev.Resources = true
		}
		if len(m.Prompts) > 0 {
			ev.Prompts = true
		}
		if len(m.Tools) > 0 {
			ev.Tools = true
		}
	}
	for _, path := range slices.Sorted(maps.Keys(changes)) {
		was, now := r.serving[path], changes[path]
		wasOn := was != nil && was.plugin != nil
		nowOn := now != nil && now.plugin != nil
		switch {
		case wasOn && nowOn:
			ev.Replaced = append(ev.Replaced, now.manifest.Name)
		case nowOn:
			ev.Added = append(ev.Added, now.manifest.Name)
		case wasOn:
			ev.Removed = append(ev.Removed, was.manifest.Name)
		}
		if wasOn {
			touch(was.manifest)
		}
		if nowOn {
			touch(now.manifest)
		}
	}
	return ev
}

// report records the outcome of a scan that tried to change something
// (tried) and publishes the plugin counts.
func (r *Registry) report(tried bool, start time.Time) {
	serving, failed := 0, 0
	for _, l := range r.serving {
		if l.plugin != nil {
			serving++
		}
	}
	var host []string
	for _, f := range r.files {
		if f.failure != nil || f.refusal != nil {
			failed++
			if errors.Is(f.failure, plugin.ErrHost) {
				host = append(host, f.path)
			}
		}
	}
	if len(host) == 0 {
		r.hostFail.Store(nil)
	} else {
		slices.Sort(host)
		why := fmt.Sprintf("%d plugin file(s) fail for a host reason, first %s: %v", len(host), host[0], r.files[host[0]].failure)
		r.hostFail.Store(&why)
	}
	if tried {
		err := errors.Join(r.scanErrs...)
		r.last = reloadStatus{at: time.Now(), ok: err == nil}
		if err != nil {
			r.last.err = err.Error()
		}
		if r.opts.Observer != nil {
			r.opts.Observer.Reload(err == nil, time.Since(start))
		}
	}
	if r.opts.Observer != nil {
		r.opts.Observer.Plugins(serving, failed)
	}
}

// Run loads the directory, then watches it until ctx is done. It returns
// an error only if the directory cannot be watched at all.
func (r *Registry) Run(ctx context.Context) error {
	var w *watcher
	var werr error
	if r.opts.Dir != "" {
		w, werr = newWatcher(r.opts.Dir)
	}
	if werr != nil {
		r.log.Warn("cannot watch the plugin directory; relying on periodic rescans", "dir", r.opts.Dir, "err", werr)
	} else if w != nil {
		defer w.Close()
	}
	var events <-chan struct{}
	if w != nil {
		events = w.changes
	}
	timer := time.NewTimer(0) // the first scan
	defer timer.Stop()
	var tick <-chan time.Time
	if r.opts.Rescan > 0 {
		t := time.NewTicker(r.opts.Rescan)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-events:
			timer.Reset(r.opts.Debounce)
		case <-r.kick:
			timer.Reset(0)
		case <-tick:
			timer.Reset(0)
		case <-timer.C:
			pending, _, err := r.startScan(ctx)
			if err != nil {
				r.log.Error("plugin directory scan failed", "dir", r.opts.Dir, "err", err)
			}
			if pending {
				timer.Reset(r.opts.Debounce)
			}
		}
	}
}

// Close waits for retired plugins to drain, then closes every plugin and
// module. Call it after the servers stopped using the catalog.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		close(r.closing)
	}
	r.closed = true
	r.mu.Unlock()
	r.jobs.Wait() // quick: closing stops their compiles
	r.mu.Lock()
	serving := r.serving
	r.serving = map[string]*loaded{}
	for _, l := range r.fresh {
		_ = l.module.Close(ctx)
	}
	for _, l := range r.waiting {
		_ = l.module.Close(ctx)
	}
	r.fresh, r.waiting = map[string]*loaded{}, map[string]*loaded{}
	r.mu.Unlock()
	r.drains.Wait()
	var errs []error
	for _, l := range serving {
		if l.plugin != nil {
			if err := l.plugin.Close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if err := l.module.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
