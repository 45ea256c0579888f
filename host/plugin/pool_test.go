package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// poolHarness drives one plugin's pool directly: creations wait at a gate
// the test opens, calls are acquire/release pairs the test holds.
type poolHarness struct {
	t       *testing.T
	e       *env
	p       *Plugin
	clock   *fakeClock
	started chan struct{} // one value per creation that reached the gate
	gate    chan error    // one value lets one creation proceed (nil) or fail
}

// pending is an acquire in flight.
type pending struct {
	done  chan struct{}
	in    *instance
	class ErrorClass
	err   error
}

func newPoolHarness(t *testing.T, cfg Config) *poolHarness {
	t.Helper()
	e := newEnv(t, RuntimeConfig{})
	h := &poolHarness{t: t, e: e, clock: &fakeClock{}, started: make(chan struct{}, 64), gate: make(chan error, 64)}
	h.clock.advance(time.Hour)
	h.p = e.load(t, "good", cfg)
	h.p.mu.Lock()
	h.p.now = h.clock.now
	for i := range h.p.idle {
		h.p.idle[i].since = h.clock.now()
	}
	h.p.mu.Unlock()
	t.Cleanup(func() { // runs before load's Close: a failed test must not hang it
		for range cap(h.gate) { // no creation stays held at the gate
			select {
			case h.gate <- nil:
			default:
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.p.Close(ctx) // gives up on instances a failed scenario still holds
	})
	real := h.p.create
	h.p.create = func(ctx context.Context, cm CompiledModule) (*instance, error) {
		h.started <- struct{}{}
		if err := <-h.gate; err != nil {
			return nil, err
		}
		return real(ctx, cm)
	}
	return h
}

// take starts an acquire.
func (h *poolHarness) take(ctx context.Context) *pending {
	w := &pending{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.in, w.class, w.err = h.p.acquire(ctx, 0, false)
	}()
	return w
}

// got waits for an acquire to finish and requires an instance.
func (h *poolHarness) got(w *pending) *instance {
	h.t.Helper()
	h.wait(w)
	if w.err != nil {
		h.t.Fatalf("acquire: %s: %v", w.class, w.err)
	}
	return w.in
}

func (h *poolHarness) wait(w *pending) {
	h.t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("acquire did not finish")
	}
}

// creationStarted waits for the next creation to reach the gate.
func (h *poolHarness) creationStarted() {
	h.t.Helper()
	select {
	case <-h.started:
	case <-time.After(10 * time.Second):
		h.t.Fatal("no creation started")
	}
}

// until waits for the pool to reach a state (a synchronization point, not
// a timing assertion: the bound only stops a hung test).
func (h *poolHarness) until(want poolStats) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.p.stats() != want {
		if time.Now().After(deadline) {
			h.t.Fatalf("pool %+v, want %+v", h.p.stats(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *poolHarness) noCreation() {
	h.t.Helper()
	if n := len(h.started); n > 0 {
		h.t.Fatalf("%d unexpected creations", n)
	}
}

func TestPool(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		run  func(h *poolHarness)
		// the pool and the observer's counts at the end
		want        poolStats
		wantCreated int
		wantDiscard map[string]int
	}{{
		name: "one warm instance after Load",
		cfg:  Config{PoolSize: 4},
		run:  func(h *poolHarness) { h.noCreation() },
		want: poolStats{live: 1, idle: 1}, wantCreated: 1,
	}, {
		name: "grows while a call waits",
		cfg:  Config{PoolSize: 3},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b := h.take(ctx)
			h.creationStarted()
			h.until(poolStats{live: 2, creating: 1, waiting: 1})
			h.gate <- nil
			bi := h.got(b)
			if bi == a {
				t.Error("the waiting call got the busy instance")
			}
			h.p.release(a)
			h.p.release(bi)
			h.noCreation()
		},
		want: poolStats{live: 2, idle: 2}, wantCreated: 2,
	}, {
		name: "a waiting call takes whichever instance is free first",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b := h.take(ctx)
			h.creationStarted()
			h.p.release(a)
			if got := h.got(b); got != a {
				t.Error("the waiting call did not get the released instance")
			}
			h.gate <- nil // the new instance idles
			h.until(poolStats{live: 2, idle: 1})
			h.p.release(a)
		},
		want: poolStats{live: 2, idle: 2}, wantCreated: 2,
	}, {
		name: "never more instances than the limit",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			var ws []*pending
			for range 5 {
				ws = append(ws, h.take(ctx))
			}
			h.creationStarted()
			h.until(poolStats{live: 2, creating: 1, waiting: 5})
			h.noCreation()
			h.gate <- nil
			h.until(poolStats{live: 2, waiting: 4})
			h.p.release(a)
			// Each released instance serves the next waiting call.
			handled := make([]bool, len(ws))
			for served := 0; served < len(ws); {
				progress := false
				for i, w := range ws {
					if handled[i] {
						continue
					}
					select {
					case <-w.done:
						handled[i], progress = true, true
						served++
						if w.err != nil {
							t.Fatalf("waiting call: %v", w.err)
						}
						h.p.release(w.in)
					default:
					}
				}
				if !progress {
					time.Sleep(time.Millisecond)
				}
			}
			h.noCreation()
		},
		want: poolStats{live: 2, idle: 2}, wantCreated: 2,
	}, {
		name: "idle instances close down to the warm one",
		cfg:  Config{PoolSize: 3, IdleTimeout: time.Minute},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b, c := h.take(ctx), h.take(ctx)
			h.creationStarted()
			h.creationStarted()
			h.gate <- nil
			h.gate <- nil
			bi, ci := h.got(b), h.got(c)
			h.p.release(a)
			h.clock.advance(30 * time.Second)
			h.p.release(bi)
			h.p.release(ci) // the most recently used
			h.p.mu.Lock()
			armed := h.p.reapArmed
			h.p.mu.Unlock()
			if !armed {
				t.Error("no reap scheduled with idle instances beyond the warm one")
			}
			if n := h.p.reapIdle(); n != 0 {
				t.Errorf("reaped %d instances idle for 30s, want 0", n)
			}
			h.clock.advance(31 * time.Second)
			if n := h.p.reapIdle(); n != 1 {
				t.Errorf("reaped %d instances after 61s, want 1 (idle for 1m1s)", n)
			}
			h.clock.advance(time.Hour)
			if n := h.p.reapIdle(); n != 1 {
				t.Errorf("reaped %d instances after an hour, want 1 (the warm one stays)", n)
			}
			if got := h.got(h.take(ctx)); got != ci {
				t.Error("the warm instance is not the most recently used one")
			} else {
				h.p.release(got)
			}
		},
		want: poolStats{live: 1, idle: 1}, wantCreated: 3, wantDiscard: map[string]int{"idle": 2},
	}, {
		name: "a negative idle timeout keeps every instance",
		cfg:  Config{PoolSize: 2, IdleTimeout: -1},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b := h.take(ctx)
			h.creationStarted()
			h.gate <- nil
			bi := h.got(b)
			h.p.release(a)
			h.p.release(bi)
			h.clock.advance(24 * time.Hour)
			if n := h.p.reapIdle(); n != 0 {
				t.Errorf("reaped %d", n)
			}
		},
		want: poolStats{live: 2, idle: 2}, wantCreated: 2,
	}, {
		name: "a discarded last instance is replaced in the background",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			a := h.got(h.take(context.Background()))
			h.p.discard(a, "trap")
			h.creationStarted()
			h.until(poolStats{live: 1, creating: 1})
			h.gate <- nil
			h.until(poolStats{live: 1, idle: 1})
		},
		want: poolStats{live: 1, idle: 1}, wantCreated: 2, wantDiscard: map[string]int{"trap": 1},
	}, {
		name: "a discarded instance is not replaced while another idles",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b := h.take(ctx)
			h.creationStarted()
			h.gate <- nil
			bi := h.got(b)
			h.p.release(a)
			h.p.discard(bi, "recycle")
			h.noCreation()
		},
		want: poolStats{live: 1, idle: 1}, wantCreated: 2, wantDiscard: map[string]int{"recycle": 1},
	}, {
		name: "a failed creation fails the waiting call",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			ctx := context.Background()
			a := h.got(h.take(ctx))
			b := h.take(ctx)
			h.creationStarted()
			h.gate <- errors.New("no memory")
			h.wait(b)
			if b.class != ClassInstantiate || b.err == nil {
				t.Errorf("waiting call: %s %v, want instantiate", b.class, b.err)
			}
			h.p.release(a)
		},
		want: poolStats{live: 1, idle: 1}, wantCreated: 1,
	}, {
		name: "a call that gives up leaves the queue",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			a := h.got(h.take(context.Background()))
			ctx, cancel := context.WithCancel(context.Background())
			b := h.take(ctx)
			h.creationStarted()
			cancel()
			h.wait(b)
			if b.class != ClassCanceled || !errors.Is(b.err, context.Canceled) {
				t.Errorf("canceled call: %s %v", b.class, b.err)
			}
			h.until(poolStats{live: 2, creating: 1})
			h.gate <- nil // the new instance idles
			h.until(poolStats{live: 2, idle: 1})
			h.p.release(a)
		},
		want: poolStats{live: 2, idle: 2}, wantCreated: 2,
	}, {
		name: "close during growth",
		cfg:  Config{PoolSize: 2},
		run: func(h *poolHarness) {
			a := h.got(h.take(context.Background()))
			b := h.take(context.Background())
			h.creationStarted()
			closed := make(chan error, 1)
			go func() { closed <- h.p.Close(context.Background()) }()
			h.wait(b)
			if b.class != ClassClosed {
				t.Errorf("waiting call during Close: %s %v", b.class, b.err)
			}
			if _, _, err := h.p.acquire(context.Background(), 0, false); !errors.Is(err, ErrClosed) {
				t.Errorf("acquire after Close: %v", err)
			}
			h.p.release(a) // the busy instance drains
			h.until(poolStats{live: 1, creating: 1})
			select {
			case err := <-closed:
				t.Fatalf("Close returned %v with a creation in flight", err)
			default:
			}
			h.gate <- nil
			if err := <-closed; err != nil {
				t.Errorf("Close: %v", err)
			}
		},
		want: poolStats{}, wantCreated: 2, wantDiscard: map[string]int{"close": 2},
	}, {
		name: "close gives up on a busy instance when its context ends",
		cfg:  Config{PoolSize: 1},
		run: func(h *poolHarness) {
			a := h.got(h.take(context.Background()))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := h.p.Close(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Close with a busy instance and a done context: %v", err)
			}
			h.p.release(a) // closed when it comes back
		},
		want: poolStats{}, wantCreated: 1, wantDiscard: map[string]int{"close": 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPoolHarness(t, tt.cfg)
			h.run(t, tt.run)
			h.until(tt.want)
			h.e.rec.mu.Lock()
			created, discarded := h.e.rec.created, h.e.rec.discarded
			h.e.rec.mu.Unlock()
			if created != tt.wantCreated {
				t.Errorf("created %d instances, want %d", created, tt.wantCreated)
			}
			if diff := cmp.Diff(tt.wantDiscard, discarded); diff != "" {
				t.Errorf("discards (-want +got):\n%s", diff)
			}
		})
	}
}

// run runs a scenario with the harness bound to the subtest.
func (h *poolHarness) run(t *testing.T, fn func(*poolHarness)) {
	h.t = t
	fn(h)
}

// TestPoolHammer drives a pool of 3 from 12 goroutines through Call with
// growth and idle reaping racing: calls all succeed and the pool never
// exceeds its limit.
func TestPoolHammer(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "good", Config{PoolSize: 3, IdleTimeout: time.Nanosecond})
	var wg sync.WaitGroup
	var over atomic.Int32
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if _, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"good://hello","principal":{"id":"t"}}`)); err != nil {
					t.Error(err)
					return
				}
				if s := p.stats(); s.live > 3 {
					over.Add(1)
				}
				p.reapIdle()
			}
		}()
	}
	wg.Wait()
	if n := over.Load(); n > 0 {
		t.Errorf("the pool exceeded its limit %d times", n)
	}
	p.reapIdle()
	if s := p.stats(); s.live < 1 || s.live > 3 {
		t.Errorf("pool %+v after the calls", s)
	}
}
