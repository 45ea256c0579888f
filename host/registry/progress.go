package registry

import (
	"log/slog"
	"path/filepath"
	"sync"
	"time"
)

// defaultProgressEvery is how often a scan logs its slowest compile still
// running.
const defaultProgressEvery = 5 * time.Second

// progress follows the compiles of one scan. It reports each finished
// file to Options.Progress and logs it when the scan has more than one
// (n of m and how long it took), and while any compile runs it logs, every
// interval, how many are done and the one that has run longest: what a
// person waiting on many plugins wants to know, on a terminal or not.
type progress struct {
	mu      sync.Mutex
	done    int
	total   int
	report  func(done, total int)
	log     *slog.Logger
	running map[string]time.Time // path → when its compile got a worker
	stop    chan struct{}        // closed when every job is done
}

// newProgress starts following total jobs; the interval logger stops when
// they are done or closing is closed.
func newProgress(total int, report func(done, total int), log *slog.Logger, every time.Duration, closing <-chan struct{}) *progress {
	if every <= 0 {
		every = defaultProgressEvery
	}
	p := &progress{total: total, report: report, log: log, running: map[string]time.Time{}, stop: make(chan struct{})}
	if total > 1 {
		p.log.Info("compiling plugins", "files", total)
	}
	go p.watch(every, closing)
	return p
}

// began records that path's compile got a worker.
func (p *progress) began(path string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[path] = time.Now()
}

// step records that path's job is over (compiled, refused or unchanged).
func (p *progress) step(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	args := []any{"n", p.done, "of", p.total, "file", filepath.Base(path)}
	if t, ok := p.running[path]; ok {
		args = append(args, "compile", time.Since(t).Round(time.Millisecond).String())
		delete(p.running, path)
	}
	if p.total > 1 {
		p.log.Info("plugin file done", args...)
	}
	if p.report != nil {
		p.report(p.done, p.total)
	}
	if p.done == p.total {
		close(p.stop)
	}
}

func (p *progress) watch(every time.Duration, closing <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-closing:
			return
		case <-t.C:
			p.logSlowest()
		}
	}
}

// logSlowest logs the compile that has run longest, if any runs.
func (p *progress) logSlowest() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var slow string
	var since time.Time
	for path, t := range p.running {
		if slow == "" || t.Before(since) {
			slow, since = path, t
		}
	}
	if slow == "" {
		return
	}
	p.log.Info("still compiling plugins", "done", p.done, "of", p.total, "compiling", len(p.running),
		"slowest", filepath.Base(slow), "for", time.Since(since).Round(time.Second).String())
}
