package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The density rows (row 5 of make bench, and make bench-density at full
// size): how many plugins one corral process holds and what each costs.
// For every engine and kind of plugin (Go guests of 1,000 resources each,
// the fixture rewritten per copy; small generated providers of one
// resource, one prompt and one tool each), a server of one plugin and a
// server of N, alive at once so that their page latencies are measured
// seconds apart; then the big one's memory idle and under load, its first
// calls while asleep, and its start with a cold and with a warm cache.

// densityKind is a kind of plugin fleet.
type densityKind struct {
	name  string // "go" or "small"
	label string // for the table
	// write fills dir with n plugins and returns their names and one
	// resource URI of each.
	write func(o options, dir string, n int) (names, docs []string, err error)
}

var (
	kindGo = densityKind{"go", "Go guests, 1,000 resources each", func(o options, dir string, n int) ([]string, []string, error) {
		names, err := fleet(o, dir, n, 1000)
		return names, docsOf(names), err
	}}
	kindSmall = densityKind{"small", "small generated providers", func(_ options, dir string, n int) ([]string, []string, error) {
		names, err := writeSmallPlugins(dir, n)
		return names, docsOf(names), err
	}}
)

func docsOf(names []string) []string {
	docs := make([]string, len(names))
	for i, n := range names {
		docs[i] = n + "://doc"
	}
	return docs
}

// workingSet is how many plugins the load and the first-call samples
// touch: the hot subset of a fleet.
const workingSet = 100

// densityServer is one corral process serving a fleet.
type densityServer struct {
	p           *proc
	names, docs []string
	cfg, cache  string
	bin         string
	ready       time.Duration
}

// densityResult is what one engine and kind measured with n plugins.
type densityResult struct {
	engine   string
	kind     densityKind
	n        int
	pages    int
	canSleep bool // the binary has limits.sleepAfter
	entries  bool // every plugin's sleepAfter was an entry of its own, not plugins.limits

	f50, l50, baseF50, baseL50 []time.Duration // one per repetition
	cold, warm                 time.Duration
	coldCache                  bool // the cache was empty before the first start
	idle, idleAnon, baseIdle   int64
	liveIdle                   int // instances live when idle was read
	loaded                     int64
	warmIdle                   int64
	wake                       []time.Duration // first call of each sampled sleeping plugin, sorted
}

// engineBinary returns the corral binary that runs engine.
func engineBinary(o options, engine string) (string, error) {
	bin := o.corral
	if engine == "wasmtime" {
		bin = filepath.Join(o.root, "bin", "corral-wasmtime")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("engine %s: %w (make build%s)", engine, err, map[bool]string{true: "-wasmtime"}[engine == "wasmtime"])
	}
	return bin, nil
}

// sleepSupported reports whether bin knows plugin.<name>.limits.sleepAfter
// (a plugin life cycle with sleeping plugins).
func sleepSupported(ctx context.Context, o options, bin string) bool {
	return configAccepted(ctx, o, bin, "plugin:\n  probe:\n    limits:\n      sleepAfter: 1s\n")
}

// fleetSupported reports whether bin knows plugins.limits.sleepAfter (one
// key for every plugin).
func fleetSupported(ctx context.Context, o options, bin string) bool {
	return configAccepted(ctx, o, bin, "plugins:\n  limits:\n    sleepAfter: 1s\n")
}

// configAccepted reports whether bin's config check accepts body.
func configAccepted(ctx context.Context, o options, bin, body string) bool {
	cfg := filepath.Join(o.out, "sleep-probe.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		return false
	}
	return exec.CommandContext(ctx, bin, "config", "check", cfg).Run() == nil
}

// densityConfig writes the config of a fleet: its engine, its cache and,
// when sleepAfter is set, every plugin's limits.sleepAfter: one
// plugins.limits key, or with entries an entry per plugin.
func densityConfig(path, dir, cache, engine string, names []string, sleepAfter time.Duration, entries bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "log:\n  level: warn\nplugins:\n  dir: %s\n  cacheDir: %s\n  engine: %s\n", dir, cache, engine)
	switch {
	case sleepAfter > 0 && entries:
		b.WriteString("plugin:\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  %s:\n    limits:\n      sleepAfter: %s\n", n, sleepAfter)
		}
	case sleepAfter > 0:
		fmt.Fprintf(&b, "  limits:\n    sleepAfter: %s\n", sleepAfter)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// startDensity writes n plugins of kind and serves them with bin, the
// compilation cache in cache (wiped first when cold).
func startDensity(ctx context.Context, o options, engine, bin string, kind densityKind, n int, cache string, cold bool, sleepAfter time.Duration, entries bool) (*densityServer, bool, error) {
	tag := fmt.Sprintf("density-%s-%s-%d", engine, kind.name, n)
	// The plugin files are the same for every engine: one copy on disk.
	dir := filepath.Join(o.out, fmt.Sprintf("density-%s-%d", kind.name, n))
	names, docs, err := kind.write(o, dir, n)
	if err != nil {
		return nil, false, err
	}
	if cold {
		if err := os.RemoveAll(cache); err != nil {
			return nil, false, fmt.Errorf("cache: %w", err)
		}
	}
	cached, _ := os.ReadDir(cache)
	s := &densityServer{names: names, docs: docs, cfg: filepath.Join(o.out, tag+".yaml"), cache: cache, bin: bin}
	if err := densityConfig(s.cfg, dir, cache, engine, names, sleepAfter, entries); err != nil {
		return nil, false, err
	}
	if err := s.start(ctx, o, tag); err != nil {
		return nil, false, err
	}
	return s, len(cached) == 0, nil
}

// start runs the server and records its time to ready.
func (s *densityServer) start(ctx context.Context, o options, tag string) error {
	adminPort, err := freePort()
	if err != nil {
		return err
	}
	admin := fmt.Sprintf("127.0.0.1:%d", adminPort)
	limit := time.Hour
	if d, ok := ctx.Deadline(); ok {
		limit = time.Until(d)
	}
	t0 := time.Now()
	p, err := start(ctx, "corral-"+tag, filepath.Join(o.out, "logs", "corral-"+tag+".log"), nil, limit, readyz,
		s.bin, "serve", "--config", s.cfg, "--http", "127.0.0.1:{port}", "--admin", admin)
	if err != nil {
		return err
	}
	s.ready = time.Since(t0)
	p.admin = "http://" + admin
	s.p = p
	return nil
}

// spread returns k of xs evenly spaced (all of them when k ≥ len(xs)).
func spread[T any](xs []T, k int) []T {
	if k >= len(xs) {
		return xs
	}
	out := make([]T, k)
	for i := range k {
		out[i] = xs[i*len(xs)/k]
	}
	return out
}

// measureDensity measures one engine and kind with n plugins.
func measureDensity(ctx context.Context, o options, engine string, kind densityKind, n int) (*densityResult, error) {
	bin, err := engineBinary(o, engine)
	if err != nil {
		return nil, err
	}
	var sleepAfter time.Duration
	canSleep := sleepSupported(ctx, o, bin)
	if canSleep {
		sleepAfter = o.sleepAfter
	}
	// One plugins.limits key when the binary has it, unless -entries asks
	// for an entry per plugin (what a configuration of n entries costs).
	entries := o.entries || !fleetSupported(ctx, o, bin)
	r := &densityResult{engine: engine, kind: kind, n: n, canSleep: canSleep, entries: entries && sleepAfter > 0}
	// The one-plugin server has its own cache; the big one's is wiped for
	// small plugins (cheap to compile) and kept between runs for Go guests
	// unless -cold says otherwise (1,000 of them take minutes to compile).
	baseCache := filepath.Join(o.out, "cache-density-"+engine+"-"+kind.name+"-1")
	base, _, err := startDensity(ctx, o, engine, bin, kind, 1, baseCache, false, sleepAfter, entries)
	if err != nil {
		return nil, err
	}
	defer base.p.stop()
	cache := filepath.Join(o.out, "cache-density-"+engine+"-"+kind.name)
	big, coldCache, err := startDensity(ctx, o, engine, bin, kind, n, cache, kind.name == "small" || o.cold, sleepAfter, entries)
	if err != nil {
		return nil, err
	}
	defer func() { big.p.stop() }()
	r.cold, r.coldCache = big.ready, coldCache

	// Page latency, the two servers interleaved in every repetition.
	type pages struct{ first, last call }
	var pg [2]pages
	for i, s := range []*densityServer{base, big} {
		cursor, count, err := lastCursor(ctx, s.p.url)
		if err != nil {
			return nil, err
		}
		pg[i] = pages{first: callList, last: callList}
		pg[i].last.params = `"cursor":"` + cursor + `",`
		if s == big {
			r.pages = count
		}
	}
	for range o.reps {
		for i, s := range []*densityServer{base, big} {
			a := load(ctx, s.p.url, []call{pg[i].first}, 1, o.warm, o.dur)
			b := load(ctx, s.p.url, []call{pg[i].last}, 1, o.warm, o.dur)
			if a.errs+b.errs > 0 {
				return nil, fmt.Errorf("%s %s %d: list errors: %v %v", engine, kind.name, len(s.names), a.firstErr, b.firstErr)
			}
			if s == base {
				r.baseF50, r.baseL50 = append(r.baseF50, a.p50), append(r.baseL50, b.p50)
			} else {
				r.f50, r.l50 = append(r.f50, a.p50), append(r.l50, b.p50)
			}
		}
	}

	// Idle: after every plugin had time to fall asleep (or a second, when
	// plugins never sleep).
	settle := func() {
		if sleepAfter > 0 {
			sleep(ctx, sleepAfter+2*time.Second)
		} else {
			sleep(ctx, time.Second)
		}
	}
	settle()
	if r.idle, r.idleAnon, err = rssDetail(big.p.pid()); err != nil {
		return nil, err
	}
	if r.baseIdle, _, err = rssDetail(base.p.pid()); err != nil {
		return nil, err
	}
	if r.liveIdle, _, err = countInstances(ctx, big.p.admin+"/metrics"); err != nil {
		return nil, err
	}

	hot := spread(big.docs, workingSet)
	if sleepAfter > 0 {
		// The first call of each sampled plugin wakes it; at least 10
		// samples, and no more once -wake-budget has gone.
		cl := newClient(1)
		var buf bytes.Buffer
		t1 := time.Now()
		for i, uri := range hot {
			if i >= 10 && time.Since(t1) > o.wakeBudget {
				break
			}
			c := call{"resources/read", uri, `"uri":"` + uri + `",`}
			t0 := time.Now()
			if err := do(ctx, cl, big.p.url, c, c.body(), &buf); err != nil {
				cl.CloseIdleConnections()
				return nil, fmt.Errorf("%s %s: first call of %s: %w", engine, kind.name, uri, err)
			}
			r.wake = append(r.wake, time.Since(t0))
		}
		cl.CloseIdleConnections()
		slices.Sort(r.wake)
	}

	var reads []call
	for _, uri := range hot {
		reads = append(reads, call{"resources/read", uri, `"uri":"` + uri + `",`})
	}
	var lr loadResult
	r.loaded = peakRSS(big.p.pid(), func() { lr = load(ctx, big.p.url, reads, 8, o.warm, 2*o.dur) })
	if lr.errs > 0 {
		return nil, fmt.Errorf("%s %s %d: read errors under load: %v", engine, kind.name, n, lr.firstErr)
	}

	// Restart on the cache the first start filled.
	big.p.stop()
	if err := big.start(ctx, o, fmt.Sprintf("density-%s-%s-%d-warm", engine, kind.name, n)); err != nil {
		return nil, err
	}
	r.warm = big.ready
	settle()
	if r.warmIdle, _, err = rssDetail(big.p.pid()); err != nil {
		return nil, err
	}
	return r, nil
}

// rowDensity is row 5: the density of each -engines engine, for
// -density-go Go guests and -density-small small plugins; then the
// memory of one more instance of a Go guest.
func rowDensity(ctx context.Context, o options, t *table) error {
	var rs []*densityResult
	for _, engine := range o.engines {
		for _, k := range []struct {
			kind densityKind
			n    int
		}{{kindGo, o.densityGo}, {kindSmall, o.densitySmall}} {
			if k.n < 2 {
				continue
			}
			t0 := time.Now()
			r, err := measureDensity(ctx, o, engine, k.kind, k.n)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench: density %s, %d %s: %s\n", engine, k.n, k.kind.name, time.Since(t0).Round(time.Second))
			rs = append(rs, r)
		}
	}
	t.section("5. Density: plugins in one process",
		"engine", "plugins", "list pages", "first page p50 (÷ 1 plugin)", "last page p50 (÷ 1 plugin)",
		"RSS idle (anonymous); per plugin", "RSS peak under load",
		"ready, cold cache", "ready, warm cache", "RSS idle after the warm start; per plugin", "first call asleep p50 / p99")
	asleep := false
	for _, r := range rs {
		ratio := func(a, b []time.Duration) string {
			return fmtDur(median(a)) + " (" + fmtRatio(float64(median(a))/float64(median(b))) + ")"
		}
		cold := fmtDur(r.cold)
		if !r.coldCache {
			cold += " †"
		}
		wake := "n/a: no sleep key"
		if r.canSleep {
			wake = "n/a: -sleep-after 0"
		}
		if len(r.wake) > 0 {
			wake = fmt.Sprintf("%s / %s (%d plugins)", fmtDur(percentile(r.wake, 0.5)), fmtDur(percentile(r.wake, 0.99)), len(r.wake))
			asleep = true
		}
		label := fmt.Sprintf("%d %s", r.n, r.kind.label)
		if r.entries {
			label += ", an entry each"
		}
		t.row(r.engine, label, fmt.Sprint(r.pages),
			ratio(r.f50, r.baseF50), ratio(r.l50, r.baseL50),
			fmt.Sprintf("%s (%s); %s", fmtMiB(r.idle), fmtMiB(r.idleAnon), fmtKiB(float64(r.idle-r.baseIdle)/float64(r.n-1))),
			fmtMiB(r.loaded), cold, fmtDur(r.warm),
			fmtMiB(r.warmIdle)+"; "+fmtKiB(float64(r.warmIdle-r.baseIdle)/float64(r.n-1)), wake)
	}
	var live []string
	for _, r := range rs {
		live = append(live, fmt.Sprintf("%s %d %s: %d", r.engine, r.n, r.kind.name, r.liveIdle))
	}
	idleAt, wake := "1 s after the page loads (this binary has no `limits.sleepAfter`: every plugin stays hot)", ""
	if asleep {
		idleAt = "once every plugin was past its `limits.sleepAfter` (" + o.sleepAfter.String() + ", set by `plugins.limits.sleepAfter`, " +
			"or by an entry per plugin in the rows that say so) by 2 s"
		wake = " Before the load, the first call of each of those plugins, asleep, was timed one at a time (for at most " + o.wakeBudget.String() + ", at least 10 plugins)."
	}
	t.note(fmt.Sprintf("Each server of N plugins ran beside one of 1 plugin of the same kind (÷ 1 plugin: the ratio of their "+
		"p50s in the same repetitions; per plugin: (RSS idle of N − RSS idle of 1) ÷ (N − 1)). RSS is VmRSS, anonymous "+
		"is smaps_rollup's Anonymous. Idle is read %s; live instances then: %s. The load is 8 "+
		"clients reading the document of %d plugins spread over the fleet (all of them when fewer) for %s.%s "+
		"Ready is from exec to /readyz answering 200; warm is a restart on the cache the cold start filled, "+
		"its idle RSS read as the first's (memory a plugin released by falling asleep may stay resident in the Go heap "+
		"of the first process; a restart shows what sleeping plugins hold). "+
		"† the compilation cache held entries from an earlier run (`-cold` wipes it).",
		idleAt, strings.Join(live, ", "), workingSet, 2*o.dur, wake))
	return instanceMemory(ctx, o, t)
}

func fmtKiB(kib float64) string {
	if kib >= 1024 {
		return fmt.Sprintf("%.1f MiB", kib/1024)
	}
	return fmt.Sprintf("%.0f KiB", kib)
}

// rssDetail returns pid's VmRSS and the anonymous part of it
// (smaps_rollup), in KiB.
func rssDetail(pid int) (rss, anon int64, err error) {
	if rss, err = rssKiB(pid); err != nil {
		return 0, 0, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("smaps_rollup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Anonymous:"); ok {
			anon, err = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return rss, anon, err
		}
	}
	return 0, 0, errors.New("smaps_rollup: no Anonymous")
}
