package plugin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/tetratelabs/wazero/api"
)

// These tests cover how the wazero engine stops guests without wazero's
// WithCloseOnContextDone: the module is instrumented at Compile (package
// internal/interrupt) and every call arms the interrupt flag. The bounds
// on elapsed time below are liveness bounds (the guests would run for an
// hour or forever), not speed measurements.

// stopBound is how long after its deadline a runaway call may take to
// return, generous for -race on a loaded 2-core machine.
const stopBound = 10 * time.Second

// buildSpinGuest compiles testdata/spinguest (a Go guest that spins,
// sleeps or recurses on request) once per test binary.
var buildSpinGuest = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "corral-spinguest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "spin.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./testdata/spinguest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New(string(msg))
	}
	return os.ReadFile(out)
})

func loadBytes(t *testing.T, e *env, name string, wasm []byte, cfg Config) (*Plugin, error) {
	t.Helper()
	ctx := context.Background()
	m, err := e.rt.Compile(ctx, wasm)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close(ctx) })
	cfg.Source = name + ".wasm"
	return e.rt.Load(ctx, m, cfg)
}

// TestInterruptGoGuest: a Go guest's `for {}`, an hour's time.Sleep and
// a loop-free exponential recursion are each stopped at the deadline as a
// timeout, and the replacement instance serves.
func TestInterruptGoGuest(t *testing.T) {
	wasm, err := buildSpinGuest()
	if err != nil {
		t.Fatalf("build spinguest: %v", err)
	}
	e := newEnv(t, RuntimeConfig{})
	const timeout = 200 * time.Millisecond
	p, err := loadBytes(t, e, "spin", wasm, Config{PoolSize: 1, Limits: Limits{Timeout: timeout, FailureThreshold: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for _, req := range []string{`"spin"`, `"sleep"`, `"recurse"`} {
		t.Run(req, func(t *testing.T) {
			start := time.Now()
			_, err := invoke(p, context.Background(), abi.OpReadResource, []byte(req))
			elapsed := time.Since(start)
			var pe *Error
			if !errors.As(err, &pe) || pe.Class != ClassTimeout {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if !strings.Contains(err.Error(), "interrupted: context deadline exceeded") {
				t.Errorf("error %q does not say the call was interrupted at its deadline", err)
			}
			if elapsed < timeout || elapsed > timeout+stopBound {
				t.Errorf("returned after %v with a %v deadline", elapsed, timeout)
			}
			out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`"echo"`))
			if err != nil || string(out) != `"echo"` {
				t.Fatalf("after %s: %q, %v", req, out, err)
			}
		})
	}
}

// TestInterruptCaller: the caller cancelling a sleeping guest wakes it at
// once, as canceled, long before the plugin's own deadline.
func TestInterruptCaller(t *testing.T) {
	wasm, err := buildSpinGuest()
	if err != nil {
		t.Fatalf("build spinguest: %v", err)
	}
	e := newEnv(t, RuntimeConfig{})
	p, err := loadBytes(t, e, "spin", wasm, Config{PoolSize: 1, Limits: Limits{Timeout: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = invoke(p, ctx, abi.OpReadResource, []byte(`"sleep"`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
}

// watModule compiles WebAssembly text with wabt's wat2wasm.
func watModule(t *testing.T, src string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm is not installed (bash testdata/build.sh installs wabt)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// abiExports is enough of the ABI for a module to load.
const abiExports = `
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"w\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"w\"]}")
  (func (export "corral_abi_v1") (result i32) (i32.const 2))
  (func (export "corral_buffer") (param i32) (result i32) (i32.const 4096))`

// TestInterruptWAT: tight loops in calls, in _initialize and in the
// module's start function all stop at the deadline.
func TestInterruptWAT(t *testing.T) {
	const describe = `(if (i32.eq (local.get 0) (i32.const 1)) (then (call $set_result (i32.const 1024) (i32.const 54)) (return (i32.const 0))))`
	tests := []struct {
		name string
		src  string
		load bool // the module loads, and a call times out
	}{
		{"br", `(func (export "corral_call") (param i32 i32) (result i32) ` + describe + ` (loop (br 0)) (i32.const 0))`, true},
		{"br_if", `(func (export "corral_call") (param i32 i32) (result i32) ` + describe + ` (loop (br_if 0 (i32.const 1))) (i32.const 0))`, true},
		{"_initialize", `(func (export "_initialize") (loop (br 0)))
			(func (export "corral_call") (param i32 i32) (result i32) (i32.const 0))`, false},
		{"start section", `(func $s (loop (br_if 0 (i32.const 1)))) (start $s)
			(func (export "corral_call") (param i32 i32) (result i32) (i32.const 0))`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm := watModule(t, "(module "+abiExports+"\n"+tt.src+")")
			e := newEnv(t, RuntimeConfig{})
			const timeout = 100 * time.Millisecond
			start := time.Now()
			p, err := loadBytes(t, e, "w", wasm, Config{PoolSize: 1, Limits: Limits{Timeout: timeout}})
			if !tt.load {
				var pe *Error
				if !errors.As(err, &pe) || pe.Class != ClassInstantiate || !strings.Contains(err.Error(), "interrupted") {
					t.Fatalf("load: %v, want an interrupted instantiation", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				start = time.Now()
				_, err = invoke(p, context.Background(), abi.OpReadResource, []byte(`{}`))
				var pe *Error
				if !errors.As(err, &pe) || pe.Class != ClassTimeout {
					t.Fatalf("err = %v, want a timeout", err)
				}
			}
			if d := time.Since(start); d > timeout+stopBound {
				t.Errorf("stopped after %v with a %v deadline", d, timeout)
			}
		})
	}
}

// fakeGlobal records the flag's value.
type fakeGlobal struct {
	api.MutableGlobal // unused; satisfies the interface's unexported part
	v                 uint64
}

func (g *fakeGlobal) Set(v uint64) { g.v = v }
func (g *fakeGlobal) Get() uint64  { return g.v }

// TestInterrupterGenerations: a late AfterFunc never raises the flag of
// the next call; a done context raises it at arm; disarm reports whether
// the call was interrupted.
func TestInterrupterGenerations(t *testing.T) {
	g := &fakeGlobal{}
	irq := &interrupter{flag: g}
	ctx := context.Background()

	first := irq.arm(ctx)
	if irq.disarm() {
		t.Error("a call nobody interrupted reports fired")
	}
	second := irq.arm(ctx)
	irq.fire(first) // the first call's AfterFunc, late
	if g.v != 0 {
		t.Fatal("a late fire raised the next call's flag")
	}
	irq.fire(second)
	if g.v != 1 || !irq.disarm() {
		t.Fatalf("fire: flag %d, want 1 and fired", g.v)
	}
	irq.fire(second) // after disarm
	irq.arm(ctx)
	if g.v != 0 {
		t.Fatal("arm did not lower the flag")
	}
	irq.disarm()
	done, cancel := context.WithCancel(ctx)
	cancel()
	irq.arm(done)
	if g.v != 1 || !irq.disarm() {
		t.Fatal("a context done before the call did not raise the flag at once")
	}
}

// TestInterrupterRace: AfterFuncs firing while calls arm and disarm (run
// with -race).
func TestInterrupterRace(t *testing.T) {
	irq := &interrupter{flag: &fakeGlobal{}}
	var wg sync.WaitGroup
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		gen := irq.arm(ctx)
		wg.Add(1)
		go func() { defer wg.Done(); irq.fire(gen); irq.sleep(0) }()
		cancel()
		irq.disarm()
	}
	wg.Wait()
}

// TestInterrupterSleep: the WASI sleep wakes when the armed call's
// context is done, and sleeps its full time between calls.
func TestInterrupterSleep(t *testing.T) {
	irq := &interrupter{flag: &fakeGlobal{}}
	ctx, cancel := context.WithCancel(context.Background())
	irq.arm(ctx)
	woke := make(chan struct{})
	go func() { irq.sleep(int64(time.Hour)); close(woke) }()
	cancel()
	select {
	case <-woke:
	case <-time.After(stopBound):
		t.Fatal("sleep did not wake when the call's context was done")
	}
	irq.disarm()
	start := time.Now()
	irq.sleep(int64(time.Millisecond))
	if time.Since(start) < time.Millisecond {
		t.Error("sleep between calls returned early")
	}
}
