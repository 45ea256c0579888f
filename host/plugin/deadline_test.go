package plugin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// TestDeadlineAfterSleep: a guest that sleeps through WASI past its
// deadline and answers right after waking (sleeper.wasm: no loop or call
// between the sleep and set_result for an interrupt check to catch) never
// succeeds; every read is a timeout. Before, the sleep woke at the
// deadline and the answer was taken as a success.
func TestDeadlineAfterSleep(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "sleeper", Config{PoolSize: 1, Limits: Limits{Timeout: 100 * time.Millisecond, FailureThreshold: 1000}})
	for i := range 20 {
		out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{}`))
		var pe *Error
		if !errors.As(err, &pe) || pe.Class != ClassTimeout {
			t.Fatalf("read %d: %q, %v; want a timeout", i, out, err)
		}
	}
}

// TestSleepWakesAtDeadline: a guest sleeping an hour through WASI is
// stopped at its deadline as a timeout, on every engine (wasmtime's own
// poll_oneoff would sleep the hour). The bound is a liveness bound.
func TestSleepWakesAtDeadline(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	const timeout = 100 * time.Millisecond
	p := e.load(t, "sleeper", Config{PoolSize: 1, Limits: Limits{Timeout: timeout, FailureThreshold: 1000}})
	start := time.Now()
	_, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`h`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > timeout+stopBound {
		t.Errorf("returned after %v with a %v deadline", d, timeout)
	}
}
