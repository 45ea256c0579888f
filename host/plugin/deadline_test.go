package plugin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
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

// TestTaskDeadline: a call run as a task (catalog.Call.TaskDeadline) has
// the tool's task deadline in place of the plugin's call deadline: a guest
// sleeping past the call deadline but within the task deadline answers,
// and one sleeping past the task deadline is stopped there as a timeout.
func TestTaskDeadline(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "sleeper", Config{PoolSize: 1, Limits: Limits{Timeout: 100 * time.Millisecond, FailureThreshold: 1000}})
	call := func(req string, task time.Duration) (catalog.Result, error) {
		return p.Call(context.Background(), catalog.Call{Op: abi.OpReadResource, Request: []byte(req), TaskDeadline: task})
	}
	if _, err := call(`{}`, 0); !isTimeout(err) {
		t.Fatalf("a 150 ms sleep as a plain call under a 100 ms deadline: %v, want a timeout", err)
	}
	if res, err := call(`{}`, 5*time.Second); err != nil || string(res.Body) != `"woke up"` {
		t.Fatalf("a 150 ms sleep in a task with a 5 s task deadline: %q, %v; want it to answer", res.Body, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := call(`h`, 300*time.Millisecond)
		done <- err
	}()
	select {
	case err := <-done:
		if !isTimeout(err) {
			t.Fatalf("an hour's sleep in a task with a 300 ms task deadline: %v, want a timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("an hour's sleep ran past its task deadline (300 ms) for a minute")
	}
}

// isTimeout reports whether err is a plugin call that ran past its
// deadline, as the protocol layer tells it (Error.Timeout).
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
