package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/tasks"
)

// taskReplica is one replica's task side: its connection, store and
// Manager, on a real NATS server.
type taskReplica struct {
	conn  *Conn
	store *TaskStore
	mgr   *tasks.Manager
}

// startTaskReplica starts the task side of replica on the server at url;
// lease 0 is the default.
func startTaskReplica(t testing.TB, url, replica string, lease time.Duration) *taskReplica {
	t.Helper()
	c := startConn(t, url, replica)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := tasks.Config{Deadline: 30 * time.Second, Keep: time.Minute}
	s := NewTaskStore(c, TaskOptions{TTL: cfg.Deadline + cfg.Keep, Lease: lease,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	cfg.Remote = s
	m := tasks.New(cfg, s)
	s.Serve(m)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	eventually(t, replica+"'s lease", func() bool { // the first renewal is in
		_, leases, _, err := s.bind(ctx)
		if err != nil {
			return false
		}
		_, err = leases.Get(ctx, s.runner)
		return err == nil
	})
	return &taskReplica{conn: c, store: s, mgr: m}
}

// testLog writes a store's log to the test's.
type testLog struct{ t testing.TB }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// blockedWork runs until its task is cancelled.
func blockedWork(ctx context.Context, _ *tasks.Resume, _ func(string)) tasks.Outcome {
	<-ctx.Done()
	return tasks.Outcome{}
}

// askingWork asks for "name" and completes with the answer as the text.
func askingWork(_ context.Context, in *tasks.Resume, _ func(string)) tasks.Outcome {
	if in == nil {
		return tasks.Outcome{Requests: map[string]json.RawMessage{"name": json.RawMessage(`{"method":"elicitation/create"}`)}}
	}
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(in.Responses["name"])}}})
	return tasks.Outcome{Result: b}
}

// waitTask polls owner's task id through r until its status is want.
func waitTask(t testing.TB, r *taskReplica, owner, id string, want tasks.Status) *tasks.Task {
	t.Helper()
	var last *tasks.Task
	eventually(t, fmt.Sprintf("task %s %s", id, want), func() bool {
		tk, err := r.mgr.Get(context.Background(), owner, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		last = tk
		return tk.Status == want
	})
	return last
}

// TestTasksAcrossReplicas: three replicas on one NATS server. A task
// created on r1 is read on r2 and cancelled on r3 (idempotently); another
// principal's get and cancel answer like a missing task; a task asking
// for input on r1 is answered through r3; a 2 MiB result, over the NATS
// payload limit, is read on r2 and deleted with its task.
func TestTasksAcrossReplicas(t *testing.T) {
	srv := startServer(t)
	r1 := startTaskReplica(t, srv.url(), "r1", 0)
	r2 := startTaskReplica(t, srv.url(), "r2", 0)
	r3 := startTaskReplica(t, srv.url(), "r3", 0)
	ctx := t.Context()

	long, err := r1.mgr.Start("alice", "p", blockedWork)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r2.mgr.Get(ctx, "alice", long.ID)
	if err != nil || got.Status != tasks.Working || got.Runner != r1.store.runner || got.Plugin != "p" {
		t.Fatalf("r1's task read on r2: %+v, %v", got, err)
	}
	if _, err := r2.mgr.Get(ctx, "bob", long.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob's get on r2: %v, want ErrNotFound", err)
	}
	if err := r3.mgr.Cancel(ctx, "bob", long.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob's cancel on r3: %v, want ErrNotFound", err)
	}
	for range 2 {
		if err := r3.mgr.Cancel(ctx, "alice", long.ID); err != nil {
			t.Fatalf("cancel on r3: %v", err)
		}
	}
	waitTask(t, r2, "alice", long.ID, tasks.Cancelled)
	if err := r3.mgr.Cancel(ctx, "alice", long.ID); err != nil {
		t.Fatalf("cancel of a cancelled task on r3: %v", err)
	}

	asks, err := r1.mgr.Start("alice", "p", askingWork)
	if err != nil {
		t.Fatal(err)
	}
	parked := waitTask(t, r2, "alice", asks.ID, tasks.InputRequired)
	if len(parked.Pending) != 1 || parked.Pending["r1.name"] == nil {
		t.Fatalf("input requests read on r2: %v", parked.Pending)
	}
	if err := r3.mgr.Update(ctx, "bob", asks.ID, map[string]json.RawMessage{"r1.name": json.RawMessage(`"mallory"`)}); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob's update on r3: %v, want ErrNotFound", err)
	}
	if err := r3.mgr.Update(ctx, "alice", asks.ID, map[string]json.RawMessage{"r1.name": json.RawMessage(`"ann"`)}); err != nil {
		t.Fatalf("update on r3: %v", err)
	}
	if done := waitTask(t, r2, "alice", asks.ID, tasks.Completed); !bytes.Contains(done.Result, []byte(`ann`)) {
		t.Fatalf("result after r3's answer: %s", done.Result)
	}

	big := bytes.Repeat([]byte("x"), 2<<20)
	want, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(big)}}})
	if int64(len(want)) <= r1.conn.NATS().MaxPayload() {
		t.Fatalf("the result (%d bytes) fits the payload limit (%d): not a test of the Object Store", len(want), r1.conn.NATS().MaxPayload())
	}
	large, err := r1.mgr.Start("alice", "p", func(context.Context, *tasks.Resume, func(string)) tasks.Outcome {
		return tasks.Outcome{Result: want}
	})
	if err != nil {
		t.Fatal(err)
	}
	if done := waitTask(t, r2, "alice", large.ID, tasks.Completed); !bytes.Equal(done.Result, want) {
		t.Fatalf("the large result read on r2: %d bytes, want %d", len(done.Result), len(want))
	}
	if err := r3.store.Delete(ctx, large.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.mgr.Get(ctx, "alice", large.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("get on r2 after the delete: %v, want ErrNotFound", err)
	}
	_, _, results, _ := r2.store.bind(ctx)
	if _, err := results.GetBytes(ctx, large.ID); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("the large result after its task's delete: %v, want ErrObjectNotFound", err)
	}
}

// TestTaskRunnerGone: the tasks of a replica that stops (its lease ended)
// or loses NATS (its lease lapses) fail, with a message that says so, at
// their next read on another replica, or their next cancel; a change
// arriving after that is dropped.
func TestTaskRunnerGone(t *testing.T) {
	srv := startServer(t)
	const lease = 2 * time.Second // the bucket's TTL: the same for every replica
	r2 := startTaskReplica(t, srv.url(), "r2", lease)
	ctx := t.Context()
	failedGone := func(what string, tk *tasks.Task) {
		t.Helper()
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(tk.Error, &e) != nil || e.Code != -32603 || e.Message != errRunnerGone || tk.Message != errRunnerGone {
			t.Fatalf("%s: %+v (error %s), want failed: %s", what, tk, tk.Error, errRunnerGone)
		}
	}

	stopped := startTaskReplica(t, srv.url(), "r1", lease)
	tk, err := stopped.mgr.Start("alice", "p", blockedWork)
	if err != nil {
		t.Fatal(err)
	}
	asks, err := stopped.mgr.Start("alice", "p", askingWork)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, r2, "alice", asks.ID, tasks.InputRequired)
	if err := stopped.store.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	failedGone("the working task of a stopped replica", waitTask(t, r2, "alice", tk.ID, tasks.Failed))
	if err := r2.mgr.Update(ctx, "alice", asks.ID, map[string]json.RawMessage{"r1.name": json.RawMessage(`"ann"`)}); err != nil {
		t.Fatalf("an answer for a stopped replica's task: %v", err)
	}
	failedGone("the waiting task of a stopped replica", waitTask(t, r2, "alice", asks.ID, tasks.Failed))

	// Lost without a word: its lease lapses.
	lost := startTaskReplica(t, srv.url(), "r3", lease)
	tk, err = lost.mgr.Start("alice", "p", blockedWork)
	if err != nil {
		t.Fatal(err)
	}
	lost.store.stop() // no more renewals, no goodbye
	lost.conn.NATS().Close()
	eventually(t, "a cancel of the lost replica's task", func() bool {
		return r2.mgr.Cancel(ctx, "alice", tk.ID) == nil
	})
	failed, err := r2.mgr.Get(ctx, "alice", tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	failedGone("the task of a replica that lost NATS", failed)

	late := *failed
	late.Status, late.Error, late.Message = tasks.Completed, nil, ""
	late.Result = json.RawMessage(`{"content":[]}`)
	if err := r2.store.Put(ctx, &late); err != nil {
		t.Fatal(err)
	}
	again, err := r2.mgr.Get(ctx, "alice", tk.ID)
	if err != nil || again.Status != tasks.Failed {
		t.Fatalf("a change after the task failed: %+v %v, want it dropped", again, err)
	}
}

// TestTaskRecords: ids that no task can have answer like a missing task
// and reach no key; a record of another version is refused, not misread.
func TestTaskRecords(t *testing.T) {
	srv := startServer(t)
	r := startTaskReplica(t, srv.url(), "r1", 0)
	ctx := t.Context()
	for _, id := range []string{"", "a.b", "*", ">", "t.*", strings.Repeat("a", 65), "a b"} {
		if _, err := r.store.Get(ctx, id); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Get(%q): %v, want ErrNotFound", id, err)
		}
		if err := r.store.Delete(ctx, id); err != nil {
			t.Errorf("Delete(%q): %v", id, err)
		}
	}
	records, _, _, err := r.store.bind(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Put(ctx, taskKey("future"), []byte(`{"v":2,"owner":"alice","status":"working"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Get(ctx, "future"); err == nil || errors.Is(err, tasks.ErrNotFound) || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("a version 2 record: %v, want a version error", err)
	}
}

// TestTaskFinalChangeThroughOutage: a task that finishes while NATS is
// away is stored completed once NATS is back (within finalRetry), rather
// than read as working until its ttlMs.
func TestTaskFinalChangeThroughOutage(t *testing.T) {
	srv := startServer(t)
	r := startTaskReplica(t, srv.url(), "r1", 0)
	release, returned := make(chan struct{}), make(chan struct{})
	tk, err := r.mgr.Start("alice", "p", func(context.Context, *tasks.Resume, func(string)) tasks.Outcome {
		<-release
		close(returned)
		return tasks.Outcome{Result: json.RawMessage(`{"content":[]}`)}
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.stop()
	eventually(t, "disconnected", func() bool { return !r.conn.Status().Connected })
	close(release)
	<-returned
	time.Sleep(100 * time.Millisecond) // the first stores fail
	srv.start()
	eventually(t, "connected again", func() bool { return r.conn.Status().Connected })
	if done := waitTask(t, r, "alice", tk.ID, tasks.Completed); string(done.Result) != `{"content":[]}` {
		t.Fatalf("after the outage: %+v", done)
	}
}
