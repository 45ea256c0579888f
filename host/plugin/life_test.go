package plugin

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// loadSleepy loads testdata's good.wasm from a file of its own with a
// short SleepAfter; it returns the plugin and the file's path.
func loadSleepy(t *testing.T, e *env, cfg Config) (*Plugin, string) {
	t.Helper()
	ctx := context.Background()
	path, data := writeFixture(t, t.TempDir(), "good")
	m, err := e.rt.CompileFile(ctx, path, data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	cfg.Source = path
	if cfg.SleepAfter == 0 {
		cfg.SleepAfter = 10 * time.Millisecond
	}
	p, err := e.rt.Load(ctx, m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p, path
}

// asleep waits until p has gone to sleep n times in all, and checks that
// it holds nothing then.
func asleep(t *testing.T, p *Plugin, n int64) {
	t.Helper()
	held := func() int {
		p.rt.mu.Lock()
		defer p.rt.mu.Unlock()
		return len(p.rt.code)
	}
	deadline := time.Now().Add(10 * time.Second)
	// The code is released just after the plugin is marked asleep.
	for p.Sleeps() < n || p.Life() != LifeSleeping || held() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not asleep a %dth time: %s, %d sleeps, %d compiled modules held", n, p.Life(), p.Sleeps(), held())
		}
		time.Sleep(time.Millisecond)
	}
	p.mu.Lock()
	live, cm := p.live, p.cm
	p.mu.Unlock()
	if live != 0 || cm != nil {
		t.Errorf("asleep with %d instances, code %v", live, cm)
	}
}

// TestSleepAndWake: loaded → sleeping → woken by a call → sleeping again.
// Each wake-up compiles the module again from its file.
func TestSleepAndWake(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p, _ := loadSleepy(t, e, Config{})
	if got := p.Life(); got != LifeHot {
		t.Errorf("a plugin loaded with its code starts %s, want hot", got)
	}
	asleep(t, p, 1)
	before := e.rt.Compiles()
	readGood(t, p)
	if n := p.Wakes(); n != 1 {
		t.Errorf("%d wake-ups after one call, want 1", n)
	}
	if n := e.rt.Compiles() - before; n != 1 {
		t.Errorf("the wake-up compiled %d times, want 1", n)
	}
	asleep(t, p, 2)
	readGood(t, p)
	if n := p.Wakes(); n != 2 {
		t.Errorf("%d wake-ups after a second sleep and call, want 2", n)
	}
}

// TestWakeOnce: while a wake-up runs, every call that arrives waits for
// it; they are all served after that one wake-up and one compile.
func TestWakeOnce(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p, _ := loadSleepy(t, e, Config{PoolSize: 4})
	asleep(t, p, 1)
	gate := make(chan struct{})
	real := p.create
	p.mu.Lock()
	p.create = func(ctx context.Context, cm CompiledModule) (*instance, error) {
		<-gate
		return real(ctx, cm)
	}
	p.mu.Unlock()
	before := e.rt.Compiles()
	const calls = 16
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	call := func() {
		defer wg.Done()
		_, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"good://hello","principal":{"id":"t"}}`))
		errs <- err
	}
	wg.Add(1)
	go call()
	deadline := time.Now().Add(10 * time.Second)
	for p.Life() != LifeWaking {
		if time.Now().After(deadline) {
			t.Fatalf("the first call did not start a wake-up: %s", p.Life())
		}
		time.Sleep(time.Millisecond)
	}
	for range calls - 1 { // arriving while it wakes up
		wg.Add(1)
		go call()
	}
	for p.stats().waiting < calls {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting, want %d", p.stats().waiting, calls)
		}
		time.Sleep(time.Millisecond)
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := p.Wakes(); n != 1 {
		t.Errorf("%d wake-ups for %d calls, want 1", n, calls)
	}
	if n := e.rt.Compiles() - before; n != 1 {
		t.Errorf("%d compiles for %d calls, want 1", n, calls)
	}
}

// TestWakeRefusesAReplacedFile: a plugin whose file was replaced while it
// slept does not wake up with the new bytes, nor, from the caches, with
// the old ones; it stays asleep, and wakes once its own bytes are back.
func TestWakeRefusesAReplacedFile(t *testing.T) {
	for name, cacheDir := range map[string]string{"no cache": "", "caches": t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{CacheDir: cacheDir})
			p, path := loadSleepy(t, e, Config{})
			asleep(t, p, 1)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, fixture(t, "caps"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"good://hello","principal":{"id":"t"}}`))
			var pe *Error
			if !errors.As(err, &pe) || pe.Class != ClassInstantiate || !strings.Contains(err.Error(), "changed since it was loaded") {
				t.Fatalf("call after the file was replaced: %v, want an instantiate failure naming the change", err)
			}
			if got := p.Life(); got != LifeSleeping {
				t.Errorf("after a failed wake-up the plugin is %s, want sleeping", got)
			}
			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			readGood(t, p)
		})
	}
}

// TestDeferredWhileAsleep: a call that may be answered without the plugin
// (catalog.Call.MayDefer) is not kept waiting: it gets catalog.ErrAsleep
// at once and the plugin wakes up in the background.
func TestDeferredWhileAsleep(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p, _ := loadSleepy(t, e, Config{})
	asleep(t, p, 1)
	_, err := p.Call(context.Background(), catalog.Call{Op: abi.OpReadResource, Request: []byte(`{"uri":"good://hello","principal":{"id":"t"}}`), MayDefer: true})
	if !errors.Is(err, catalog.ErrAsleep) {
		t.Fatalf("deferrable call while asleep: %v, want catalog.ErrAsleep", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Wakes() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("not woken up in the background: %s", p.Life())
		}
		time.Sleep(time.Millisecond)
	}
	if got := e.rec.classes(p.Name()); len(got) != 1 || got[0] != ClassAsleep {
		t.Errorf("calls recorded %v, want one %s", got, ClassAsleep)
	}
}

// TestQuarantinedWhileAsleep: a quarantined plugin is refused without
// being woken up.
func TestQuarantinedWhileAsleep(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p, _ := loadSleepy(t, e, Config{Limits: Limits{FailureThreshold: 1}})
	asleep(t, p, 1)
	p.record(ClassTrap)
	_, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"good://hello","principal":{"id":"t"}}`))
	if !errors.Is(err, ErrQuarantined) {
		t.Fatalf("call while quarantined and asleep: %v, want ErrQuarantined", err)
	}
	if n := p.Wakes(); n != 0 || p.Life() != LifeSleeping {
		t.Errorf("quarantined plugin woke up (%d, %s)", n, p.Life())
	}
}

// TestWakeOutlastsTheCallDeadline: a wake-up longer than the plugin's own
// call deadline (a compile, not the guest's run) still serves the call
// that started it.
func TestWakeOutlastsTheCallDeadline(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	const deadline = 50 * time.Millisecond
	p, _ := loadSleepy(t, e, Config{Limits: Limits{Timeout: deadline}})
	asleep(t, p, 1)
	real := p.create
	p.mu.Lock()
	p.create = func(ctx context.Context, cm CompiledModule) (*instance, error) {
		time.Sleep(3 * deadline) // the wake-up outlasts the deadline
		return real(ctx, cm)
	}
	p.mu.Unlock()
	readGood(t, p)
}
