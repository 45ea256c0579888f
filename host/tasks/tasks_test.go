package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// clock is a settable clock for expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newManager(cfg Config) (*Manager, *clock) {
	c := &clock{now: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)}
	cfg.Now = c.Now
	return New(cfg, NewMemory(c.Now)), c
}

// wait polls owner's task id until its status is want.
func wait(t *testing.T, m *Manager, owner, id string, want Status) *Task {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		tk, err := m.Get(context.Background(), owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status == want {
			return tk
		}
	}
	t.Fatalf("task %s never reached %s", id, want)
	return nil
}

// blocked is work that runs until its context ends.
func blocked(ctx context.Context, _ *Resume, _ func(string)) Outcome {
	<-ctx.Done()
	return Outcome{}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	m, c := newManager(Config{Keep: time.Minute})
	release := make(chan struct{})
	tk, err := m.Start("alice", "p", func(ctx context.Context, in *Resume, _ func(string)) Outcome {
		if in == nil {
			<-release
			return Outcome{Requests: map[string]json.RawMessage{"a": json.RawMessage(`{"method":"x"}`), "b": json.RawMessage(`{"method":"y"}`)}, State: ptr("s")}
		}
		if string(in.Responses["a"]) != `1` || string(in.Responses["b"]) != `2` || *in.State != "s" {
			return Outcome{Error: json.RawMessage(`{"code":-32603,"message":"bad resume"}`)}
		}
		return Outcome{Result: json.RawMessage(`{"content":[]}`)}
	})
	if err != nil || tk.Status != Working {
		t.Fatalf("Start: %+v, %v", tk, err)
	}
	if got, _ := m.Get(ctx, "alice", tk.ID); got.Status != Working {
		t.Fatalf("right after Start: %s", got.Status)
	}
	if _, err := m.Get(ctx, "bob", tk.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another principal's Get: %v, want ErrNotFound", err)
	}
	if err := m.Cancel(ctx, "bob", tk.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another principal's Cancel: %v, want ErrNotFound", err)
	}
	close(release)
	parked := wait(t, m, "alice", tk.ID, InputRequired)
	if len(parked.Pending) != 2 || parked.Pending["r1.a"] == nil {
		t.Fatalf("pending: %v", parked.Pending)
	}
	if err := m.Update(ctx, "alice", tk.ID, map[string]json.RawMessage{"r1.a": json.RawMessage(`1`), "nope": json.RawMessage(`0`)}); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, m, "alice", tk.ID, InputRequired); len(got.Pending) != 1 || got.Pending["r1.b"] == nil {
		t.Fatalf("after a partial answer: %v", got.Pending)
	}
	if err := m.Update(ctx, "alice", tk.ID, map[string]json.RawMessage{"r1.b": json.RawMessage(`2`)}); err != nil {
		t.Fatal(err)
	}
	if done := wait(t, m, "alice", tk.ID, Completed); string(done.Result) != `{"content":[]}` {
		t.Fatalf("result: %s", done.Result)
	}
	if err := m.Cancel(ctx, "alice", tk.ID); err != nil {
		t.Fatalf("Cancel of a finished task: %v", err)
	}
	c.add(m.TTL())
	if _, err := m.Get(ctx, "alice", tk.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after ttlMs: %v, want ErrNotFound", err)
	}
}

func TestLimitsCancelAndFail(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(Config{MaxPerPrincipal: 2, MaxPerPlugin: 3})
	a1, _ := m.Start("alice", "p", blocked)
	a2, _ := m.Start("alice", "p", blocked)
	var le *LimitError
	if _, err := m.Start("alice", "q", blocked); !errors.As(err, &le) || le.Scope != "principal" {
		t.Fatalf("third of alice: %v, want the principal's limit", err)
	}
	b1, _ := m.Start("bob", "p", blocked)
	if _, err := m.Start("carol", "p", blocked); !errors.As(err, &le) || le.Scope != "plugin" {
		t.Fatalf("fourth of p: %v, want the plugin's limit", err)
	}
	if err := m.Cancel(ctx, "alice", a1.ID); err != nil {
		t.Fatal(err)
	}
	wait(t, m, "alice", a1.ID, Cancelled)
	m.Fail("p", "The plugin p was unloaded.")
	for _, c := range []struct{ owner, id string }{{"alice", a2.ID}, {"bob", b1.ID}} {
		tk := wait(t, m, c.owner, c.id, Failed)
		var e struct{ Message string }
		if json.Unmarshal(tk.Error, &e) != nil || e.Message != "The plugin p was unloaded." {
			t.Fatalf("failed task error: %s", tk.Error)
		}
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := m.Start("alice", "p", blocked); err == nil {
			break // finished tasks no longer count
		} else if time.Now().After(end) {
			t.Fatalf("after every task ended: %v", err)
		}
	}
}

func TestDeadline(t *testing.T) {
	m, _ := newManager(Config{Deadline: 20 * time.Millisecond})
	tk, err := m.Start("alice", "p", blocked)
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, m, "alice", tk.ID, Failed); got.Message == "" || got.Error == nil {
		t.Fatalf("a task past its deadline: %+v", got)
	}
}

func ptr(s string) *string { return &s }

// replicas are Managers sharing one store, each stamping the tasks it
// puts with its name, as a cluster's store does; their Remote hands a
// cancel or an answer to the Manager that runs the task.
type replicas map[string]*Manager

func (r replicas) Cancel(ctx context.Context, t *Task) error {
	return r[t.Runner].Cancel(ctx, t.Owner, t.ID)
}

func (r replicas) Update(ctx context.Context, t *Task, responses map[string]json.RawMessage) error {
	return r[t.Runner].Update(ctx, t.Owner, t.ID, responses)
}

// stamped is a shared store as seen by the replica runner.
type stamped struct {
	Store
	runner string
}

func (s stamped) Put(ctx context.Context, t *Task) error {
	cp := *t
	cp.Runner = s.runner
	return s.Store.Put(ctx, &cp)
}

// TestRemote: a task started by one Manager is cancelled and answered
// through another that shares its store; another principal's cancel is
// refused before anything is forwarded.
func TestRemote(t *testing.T) {
	ctx := context.Background()
	shared := NewMemory(nil)
	r := replicas{}
	for _, name := range []string{"r1", "r2"} {
		r[name] = New(Config{Remote: r}, stamped{shared, name})
	}
	long, err := r["r1"].Start("alice", "p", blocked)
	if err != nil {
		t.Fatal(err)
	}
	if err := r["r2"].Cancel(ctx, "bob", long.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob's cancel through r2: %v, want ErrNotFound", err)
	}
	if got := wait(t, r["r2"], "alice", long.ID, Working); got.Runner != "r1" {
		t.Fatalf("runner %q, want r1", got.Runner)
	}
	if err := r["r2"].Cancel(ctx, "alice", long.ID); err != nil {
		t.Fatal(err)
	}
	wait(t, r["r2"], "alice", long.ID, Cancelled)

	asks, err := r["r1"].Start("alice", "p", func(_ context.Context, in *Resume, _ func(string)) Outcome {
		if in == nil {
			return Outcome{Requests: map[string]json.RawMessage{"a": json.RawMessage(`{"method":"x"}`)}}
		}
		return Outcome{Result: in.Responses["a"]}
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, r["r2"], "alice", asks.ID, InputRequired)
	if err := r["r2"].Update(ctx, "alice", asks.ID, map[string]json.RawMessage{"r1.a": json.RawMessage(`{"content":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if done := wait(t, r["r2"], "alice", asks.ID, Completed); string(done.Result) != `{"content":[]}` {
		t.Fatalf("result through r2's answer: %s", done.Result)
	}
}

// counting is a Memory store that counts its writes.
type counting struct {
	*Memory
	mu   sync.Mutex
	puts int
}

func (c *counting) Put(ctx context.Context, t *Task) error {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	return c.Memory.Put(ctx, t)
}

func (c *counting) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.puts }

// TestStatusMessage: the work's progress becomes the statusMessage; a
// burst of reports is one write to the store per poll interval, and the
// last report is the finished task's message.
func TestStatusMessage(t *testing.T) {
	ctx := context.Background()
	store := &counting{Memory: NewMemory(nil)}
	m := New(Config{PollInterval: time.Hour}, store)
	reported, release := make(chan struct{}), make(chan struct{})
	var burst int
	tk, err := m.Start("alice", "p", func(_ context.Context, _ *Resume, status func(string)) Outcome {
		status("step 1")
		reported <- struct{}{}
		<-release
		before := store.count()
		for i := 2; i <= 1000; i++ {
			status(fmt.Sprintf("step %d", i))
		}
		burst = store.count() - before
		return Outcome{Result: json.RawMessage(`{"content":[]}`)}
	})
	if err != nil {
		t.Fatal(err)
	}
	<-reported
	if got, _ := m.Get(ctx, "alice", tk.ID); got.Message != "step 1" || got.Status != Working {
		t.Fatalf("after the first report: %q %s, want step 1 working", got.Message, got.Status)
	}
	close(release)
	done := wait(t, m, "alice", tk.ID, Completed)
	if burst != 0 {
		t.Errorf("999 reports within the poll interval wrote the store %d times, want 0 (one write at the interval's end)", burst)
	}
	if done.Message != "step 1000" {
		t.Errorf("completed task's statusMessage %q, want the last report", done.Message)
	}

	// Within a short interval, the last report of a burst is stored at
	// the interval's end while the work still runs.
	m = New(Config{PollInterval: 20 * time.Millisecond}, NewMemory(nil))
	release = make(chan struct{})
	defer close(release)
	tk, err = m.Start("alice", "p", func(ctx context.Context, _ *Resume, status func(string)) Outcome {
		status("a")
		status("b")
		<-release
		return Outcome{Result: json.RawMessage(`{}`)}
	})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		got, err := m.Get(ctx, "alice", tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Message == "b" && got.Status == Working {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("statusMessage %q %s, want b while working", got.Message, got.Status)
		}
	}
}

// TestStop: stopping the Manager ends a running and a waiting task, each
// stored failed with the message before Stop returns.
func TestStop(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(Config{})
	running, err := m.Start("alice", "p", blocked)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := m.Start("alice", "p", func(context.Context, *Resume, func(string)) Outcome {
		return Outcome{Requests: map[string]json.RawMessage{"a": json.RawMessage(`{"method":"x"}`)}}
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, m, "alice", waiting.ID, InputRequired)
	m.Stop(ctx, "The server stopped.")
	for _, id := range []string{running.ID, waiting.ID} {
		tk, err := m.Get(ctx, "alice", id)
		if err != nil || tk.Status != Failed || tk.Message != "The server stopped." {
			t.Errorf("task %s right after Stop: %+v, %v; want failed with the message", id, tk, err)
		}
	}
}

// gated is a Store whose Puts of a completed task of alice wait for open:
// a cluster's Store under a slow network or an outage.
type gated struct {
	*Memory
	open chan struct{}
}

func (g gated) Put(ctx context.Context, t *Task) error {
	if t.Owner == "alice" && t.Status == Completed {
		<-g.open
	}
	return g.Memory.Put(ctx, t)
}

// TestSlowStoreHoldsNoOtherTask: while one task's change is being
// stored, the Manager serves every other task: its lock is not held over
// a Store's round trip. The stalled change lands when the Store answers.
func TestSlowStoreHoldsNoOtherTask(t *testing.T) {
	ctx := context.Background()
	store := gated{Memory: NewMemory(nil), open: make(chan struct{})}
	m := New(Config{}, store)
	a, err := m.Start("alice", "p", func(context.Context, *Resume, func(string)) Outcome {
		return Outcome{Result: json.RawMessage(`{"content":[]}`)}
	})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *Task, 1)
	go func() {
		b, err := m.Start("bob", "p", func(_ context.Context, in *Resume, status func(string)) Outcome {
			if in == nil {
				status("asking")
				return Outcome{Requests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"x"}`)}}
			}
			return Outcome{Result: json.RawMessage(`{"content":[]}`)}
		})
		if err != nil {
			t.Error(err)
		}
		started <- b
	}()
	var b *Task
	select {
	case b = <-started:
	case <-time.After(10 * time.Second):
		close(store.open)
		t.Fatal("Start of another task waited for a Put of alice's")
	}
	wait(t, m, "bob", b.ID, InputRequired)
	if err := m.Update(ctx, "bob", b.ID, map[string]json.RawMessage{"r1.q": json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	wait(t, m, "bob", b.ID, Completed)
	if got, _ := m.Get(ctx, "alice", a.ID); got.Status != Working {
		t.Fatalf("alice's task reads %s while its completion is being stored, want working", got.Status)
	}
	close(store.open)
	wait(t, m, "alice", a.ID, Completed)
}
