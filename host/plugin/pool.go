package plugin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
)

// The instance pool of a plugin grows on demand and shrinks when idle.
//
// Load leaves one warm instance. A call takes an idle instance when there
// is one; otherwise it queues, and while more calls are queued than
// instances are being created, and the pool is under Config.PoolSize, one
// more instance is created in the background. A queued call takes whichever
// instance is free first: one another call hands back, or a new one. An
// instance idle for longer than Config.IdleTimeout is closed, down to one
// warm instance. A discarded instance (recycled, or after a failure) is
// replaced in the background when it was the last one or calls are queued.
//
// All counters below are guarded by Plugin.mu.

// idleInstance is an instance waiting in the pool, with the time it
// became idle.
type idleInstance struct {
	in    *instance
	since time.Time
}

// waiter is a call queued for an instance. The pool sends it exactly one
// handoff, or removes it from the queue when it gives up.
type waiter struct {
	ch chan handoff // buffered 1
}

// handoff is what a waiter receives: an instance, or the error of the
// creation it was waiting for.
type handoff struct {
	in  *instance
	err error
}

// poolStats is a snapshot of the pool for tests and logs.
type poolStats struct {
	live     int // idle + busy + being created
	idle     int
	creating int
	waiting  int
}

func (p *Plugin) stats() poolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return poolStats{live: p.live, idle: len(p.idle), creating: p.creating, waiting: len(p.waiters)}
}

// acquire returns an instance for one call, waiting for one (and growing
// the pool) when none is idle, for at most wait when it is positive. The
// class is ClassOK on success; a wait that ends unserved is ClassCanceled
// (the instances are busy, not failing).
//
// A plugin asleep or waking up (life.go) makes the call wait for the
// wake-up, for RuntimeConfig.WakeTimeout whatever wait says (neither a list
// budget nor the plugin's call deadline counts the wake-up: it is a
// compile, not the guest's run); with mayDefer it returns
// catalog.ErrAsleep at once instead, the wake-up started.
func (p *Plugin) acquire(ctx context.Context, wait time.Duration, mayDefer bool) (*instance, ErrorClass, error) {
	p.mu.Lock()
	if p.shut {
		p.mu.Unlock()
		return nil, ClassClosed, ErrClosed
	}
	if n := len(p.idle); n > 0 { // the most recently used: its memory is warm
		in := p.idle[n-1].in
		p.idle[n-1] = idleInstance{}
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return in, ClassOK, nil
	}
	waking := p.life != LifeHot
	if waking {
		if mayDefer {
			p.wakeLocked()
			p.mu.Unlock()
			return nil, ClassAsleep, catalog.ErrAsleep
		}
		wait = p.rt.cfg.WakeTimeout
	}
	w := &waiter{ch: make(chan handoff, 1)}
	p.waiters = append(p.waiters, w)
	if waking {
		p.wakeLocked()
	} else {
		p.growLocked()
	}
	p.mu.Unlock()

	var expire <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expire = t.C
	}
	select {
	case h := <-w.ch:
		if h.err != nil {
			if ctx.Err() != nil {
				return nil, ClassCanceled, h.err
			}
			return nil, ClassInstantiate, h.err
		}
		return h.in, ClassOK, nil
	case <-p.done:
		p.abandon(w)
		return nil, ClassClosed, ErrClosed
	case <-ctx.Done():
		p.abandon(w)
		return nil, ClassCanceled, fmt.Errorf("waiting for an instance: %w", ctx.Err())
	case <-expire:
		p.abandon(w)
		if waking {
			return nil, ClassCanceled, fmt.Errorf("waking up: not awake within %s (plugins.compile.timeout)", wait)
		}
		return nil, ClassCanceled, fmt.Errorf("waiting for an instance: no instance free within the call's budget of %s", wait)
	}
}

// abandon removes a waiter that gave up; an instance handed to it in the
// meantime goes back to the pool.
func (p *Plugin) abandon(w *waiter) {
	p.mu.Lock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if h := <-w.ch; h.in != nil {
		p.release(h.in)
	}
}

// growLocked starts background creations while more calls are queued than
// instances are being created (or the pool is empty), up to the limit, on
// a hot plugin (a sleeping one wakes up first).
func (p *Plugin) growLocked() {
	for !p.shut && p.life == LifeHot && p.live < p.cfg.PoolSize && (len(p.waiters) > p.creating || p.live == 0) {
		p.live++
		p.creating++
		p.bg.Add(1)
		go p.grow(p.cm)
	}
}

// grow creates one instance off the request path; it waits first while
// the plugin is failing (refillDelay).
func (p *Plugin) grow(cm CompiledModule) {
	defer p.bg.Done()
	if d := p.refillDelay(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-p.done:
			t.Stop()
		}
	}
	if p.closed.Load() {
		p.created(nil, ErrClosed)
		return
	}
	in, err := p.create(context.Background(), cm)
	if err != nil {
		p.log.Warn("plugin instance creation failed", "err", err)
	}
	p.created(in, err)
}

// created takes the outcome of a background creation: the instance goes
// to the first queued call (or idles); an error goes to the first queued
// call, which reports it.
func (p *Plugin) created(in *instance, err error) {
	p.mu.Lock()
	p.creating--
	if err != nil {
		p.live--
		if len(p.waiters) > 0 && !p.shut {
			w := p.waiters[0]
			p.waiters = slices.Delete(p.waiters, 0, 1)
			w.ch <- handoff{err: err}
			p.growLocked() // for the calls still queued
		}
		p.drainedLocked()
		p.mu.Unlock()
		return
	}
	if p.shut {
		p.live--
		p.drainedLocked()
		p.mu.Unlock()
		in.close(context.Background())
		p.obs.Instance(p.name, false, "close")
		return
	}
	p.putLocked(in)
	p.mu.Unlock()
}

// release returns an instance after a call that left it usable.
func (p *Plugin) release(in *instance) {
	p.mu.Lock()
	if p.shut {
		p.live--
		p.drainedLocked()
		p.mu.Unlock()
		in.close(context.Background())
		p.obs.Instance(p.name, false, "close")
		return
	}
	p.putLocked(in)
	p.mu.Unlock()
}

// putLocked hands a free instance to the first queued call, or idles it.
func (p *Plugin) putLocked(in *instance) {
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = slices.Delete(p.waiters, 0, 1)
		w.ch <- handoff{in: in}
		return
	}
	p.idle = append(p.idle, idleInstance{in: in, since: p.now()})
	p.armReaperLocked()
}

// discard closes an instance, which is never reused, and replaces it in
// the background when it was the last one or calls are queued.
func (p *Plugin) discard(in *instance, reason string) {
	in.close(context.Background())
	p.obs.Instance(p.name, false, reason)
	p.mu.Lock()
	p.live--
	p.growLocked()
	p.drainedLocked()
	p.mu.Unlock()
}

// drainedLocked signals Close once the pool is shut and empty.
func (p *Plugin) drainedLocked() {
	if p.shut && p.live == 0 && !p.drainedSent {
		p.drainedSent = true
		close(p.drained)
	}
}

// armReaperLocked schedules reapIdle when an instance beyond the warm one
// is idle and no reap is scheduled.
func (p *Plugin) armReaperLocked() {
	if p.cfg.IdleTimeout <= 0 || p.reapArmed || p.shut || p.live-p.creating <= 1 || len(p.idle) == 0 {
		return
	}
	d := max(p.idle[0].since.Add(p.cfg.IdleTimeout).Sub(p.now()), time.Millisecond)
	p.reapArmed = true
	if p.reaper == nil {
		p.reaper = time.AfterFunc(d, func() { p.reapIdle() })
	} else {
		p.reaper.Reset(d)
	}
}

// reapIdle closes the instances idle for at least IdleTimeout, oldest
// first, keeping one instance, and reschedules itself for the rest. It
// returns how many it closed.
func (p *Plugin) reapIdle() int {
	p.mu.Lock()
	p.reapArmed = false
	if p.shut || p.cfg.IdleTimeout <= 0 {
		p.mu.Unlock()
		return 0
	}
	now := p.now()
	var old []*instance
	for len(p.idle) > 0 && p.live-p.creating > 1 && now.Sub(p.idle[0].since) >= p.cfg.IdleTimeout {
		old = append(old, p.idle[0].in)
		p.idle[0] = idleInstance{}
		p.idle = p.idle[1:]
		p.live--
	}
	p.armReaperLocked()
	p.mu.Unlock()
	for _, in := range old {
		in.close(context.Background())
		p.obs.Instance(p.name, false, "idle")
	}
	return len(old)
}

// shutdown refuses further calls, closes the idle instances and waits
// until the busy ones come back (and are closed) or ctx is done.
func (p *Plugin) shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.shut = true
	close(p.done)
	if p.reaper != nil {
		p.reaper.Stop()
	}
	if p.sleeper != nil {
		p.sleeper.Stop()
	}
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.drainedLocked()
	p.mu.Unlock()
	for _, it := range idle {
		it.in.close(ctx)
		p.obs.Instance(p.name, false, "close")
	}
	select {
	case <-p.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
