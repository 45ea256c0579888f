package plugin

import (
	"context"
	"fmt"
	"time"
)

// A plugin's life cycle. A plugin is hot while it holds compiled code
// (and, once a call came, warm instances in its pool). Once nobody called
// it for Config.SleepAfter, it goes to sleep: every instance is closed and
// its reference to the compiled code dropped (the runtime closes the code
// when no other plugin holds it), so that only its manifest, capabilities
// and the catalog's pre-encoded items stay. The first call after that
// wakes it: one wake-up at a time compiles the module again (through the
// compilation cache; the module reads its file again, see Module) and
// creates an instance, while the calls that arrive meanwhile wait for it
// in the pool's queue, as they would for a busy instance, each for at most
// RuntimeConfig.WakeTimeout. A wake-up that fails hands its error to the calls that
// waited and leaves the plugin asleep; the next call tries again.
//
// The clock of sleep is the pool's own: the most recently used idle
// instance records when the last call ended. A timer armed when the plugin
// becomes hot checks it and arms itself again for the rest, so a call adds
// nothing to the hot path.
//
// The fields below are guarded by Plugin.mu.

// Life-cycle states, as Plugin.Life reports them.
const (
	LifeHot      = "hot"
	LifeSleeping = "sleeping"
	LifeWaking   = "waking"
)

// Life returns the plugin's life-cycle state: LifeHot, LifeSleeping or
// LifeWaking.
func (p *Plugin) Life() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.life
}

// Wakes and Sleeps count the plugin's wake-ups and the times it went to
// sleep.
func (p *Plugin) Wakes() int64  { return p.wakes.Load() }
func (p *Plugin) Sleeps() int64 { return p.sleeps.Load() }

// wakeLocked starts the one wake-up of a sleeping plugin.
func (p *Plugin) wakeLocked() {
	if p.life != LifeSleeping || p.shut {
		return
	}
	p.life = LifeWaking
	p.bg.Add(1)
	p.rt.rel.begin() // no memory release while it runs
	go p.wake()
}

// wake compiles the plugin's code and creates its first instance off any
// caller's context (every caller waiting shares it), then hands the
// instance to the first queued call and grows the pool for the others.
func (p *Plugin) wake() {
	defer p.bg.Done()
	defer p.rt.rel.end()
	ctx := context.Background()
	start := time.Now()
	cm, err := p.mod.code(ctx, p.key)
	var in *instance
	if err == nil {
		if in, err = p.create(ctx, cm); err != nil {
			p.rt.releaseCode(p.key, p.mod.digest)
			err = firstLine(err)
		}
	}
	p.mu.Lock()
	if err != nil {
		p.life = LifeSleeping
		waiters := p.waiters
		p.waiters = nil
		p.mu.Unlock()
		err = fmt.Errorf("wake up: %w", err)
		p.log.Warn("plugin did not wake up", "err", err)
		for _, w := range waiters {
			w.ch <- handoff{err: err}
		}
		return
	}
	if p.shut {
		p.mu.Unlock()
		in.close(ctx)
		p.rt.releaseCode(p.key, p.mod.digest)
		return
	}
	p.cm, p.life = cm, LifeHot
	p.wakes.Add(1)
	p.live++
	p.putLocked(in)
	p.growLocked()
	p.armSleepLocked()
	p.mu.Unlock()
	p.obs.Instance(p.name, true, "")
	p.log.Debug("plugin woke up", "took", time.Since(start).String())
}

// armSleepLocked schedules the sleep check of a hot plugin.
func (p *Plugin) armSleepLocked() {
	if p.cfg.SleepAfter <= 0 || p.shut {
		return
	}
	if p.sleeper == nil {
		p.sleeper = time.AfterFunc(p.cfg.SleepAfter, p.sleepIfIdle)
	} else {
		p.sleeper.Reset(p.cfg.SleepAfter)
	}
}

// sleepIfIdle puts the plugin to sleep when no call is running or waiting
// and the last one ended SleepAfter ago; otherwise it checks again when
// that could be so.
func (p *Plugin) sleepIfIdle() {
	p.mu.Lock()
	if p.shut || p.life != LifeHot {
		p.mu.Unlock()
		return
	}
	busy := p.live - p.creating - len(p.idle)
	if busy > 0 || p.creating > 0 || len(p.waiters) > 0 {
		p.sleeper.Reset(p.cfg.SleepAfter)
		p.mu.Unlock()
		return
	}
	if n := len(p.idle); n > 0 {
		if left := p.idle[n-1].since.Add(p.cfg.SleepAfter).Sub(p.now()); left > 0 {
			p.sleeper.Reset(left)
			p.mu.Unlock()
			return
		}
	}
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.cm, p.life = nil, LifeSleeping
	p.sleeps.Add(1)
	if p.reaper != nil {
		p.reaper.Stop()
		p.reapArmed = false
	}
	p.mu.Unlock()
	for _, it := range idle {
		it.in.close(context.Background())
		p.obs.Instance(p.name, false, "sleep")
	}
	p.rt.releaseCode(p.key, p.mod.digest)
	p.log.Debug("plugin went to sleep", "after", p.cfg.SleepAfter.String())
}
