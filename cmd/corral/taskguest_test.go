package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The plugin's side of tasks against bin/corral: a tool's own task
// deadline, progress as the statusMessage, the instance a task holds, and
// a plugin's running tasks failing when it is unloaded or quarantined.

// conformanceLimits is plugin.conformance's limits section, to go right
// after startWire's own plugin entries.
func conformanceLimits(limits string) string {
	return "  conformance:\n    limits: {" + limits + "}\n"
}

// waitEnd polls alice's task id until it is finished, failing after 20 s.
func waitEnd(t *testing.T, s *wireServer, id string) taskReply {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		r := getTask(t, s, "alice", id)
		if r.Error != nil {
			t.Fatalf("tasks/get: %+v", r.Error)
		}
		if st := r.Result.Status; st == "completed" || st == "failed" || st == "cancelled" {
			return r
		}
	}
	t.Fatalf("task %s never finished", id)
	return taskReply{}
}

// failedWith checks that r is a failed task whose error has code -32603
// and message want.
func failedWith(t *testing.T, r taskReply, want string) {
	t.Helper()
	if r.Result.Status != "failed" || r.Result.Error == nil || r.Result.Error.Code != -32603 || r.Result.Error.Message != want {
		t.Fatalf("want a failed task with -32603 %q, got %s %+v", want, r.Result.Status, r.Result.Error)
	}
}

// plainCall makes a 2026-07-28 tools/call without the tasks extension and
// returns its body, failing when no answer comes within 30 s (a bound for
// a call that would wait for an instance a task never gave back).
func plainCall(t *testing.T, s *wireServer, tool, args string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, tool, args, modernMeta)
	done := make(chan string, 1)
	go func() { done <- answerOf(t, s.post(t, "alice", body, modernHeaders("tools/call", tool))).Body }()
	select {
	case b := <-done:
		return b
	case <-time.After(30 * time.Second):
		t.Fatalf("tools/call %s: no answer within 30 s", tool)
		return ""
	}
}

// TestTasksGuest runs the conformance plugin under a 300 ms call deadline
// and one instance: bounded_job declares a task deadline of 1 s,
// slow_compute and spin_job 2 min, progress_job 1 min.
func TestTasksGuest(t *testing.T) {
	s := startWire(t, conformanceLimits("timeout: 300ms, instances: 1")+wireAuth(), "conformance")

	t.Run("a task has its tool's deadline, a plain call the call deadline", func(t *testing.T) {
		r := waitEnd(t, s, startTask(t, s, "alice", "bounded_job", `{"seconds":0.6,"label":"in time"}`))
		if r.Result.Status != "completed" || r.Result.Result == nil || r.Result.Result.Content[0].Text != "computed in time" {
			t.Fatalf("0.6 s in a task with a 1 s task deadline: %s %+v %+v", r.Result.Status, r.Result.Result, r.Result.Error)
		}
		if b := plainCall(t, s, "bounded_job", `{"seconds":0.6}`); !strings.Contains(b, `"code":-32603`) || !strings.Contains(b, `"plugin":"conformance"`) {
			t.Fatalf("0.6 s as a plain call under a 300 ms call deadline: want -32603, got %s", b)
		}
	})
	t.Run("past the task deadline", func(t *testing.T) {
		r := waitEnd(t, s, startTask(t, s, "alice", "bounded_job", `{"seconds":30}`))
		failedWith(t, r, "The tool call did not finish within its task deadline of 1s.")
		if string(r.Result.Error.Data) != `{"plugin":"conformance"}` {
			t.Errorf("error data %s, want the plugin", r.Result.Error.Data)
		}
	})
	t.Run("progress is the statusMessage", func(t *testing.T) {
		id := startTask(t, s, "alice", "progress_job", `{"steps":10}`)
		var seen string
		for end := time.Now().Add(20 * time.Second); seen == "" && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if r := getTask(t, s, "alice", id); r.Result.Status == "working" && strings.HasPrefix(r.Result.StatusMessage, "step ") {
				seen = r.Result.StatusMessage
			}
		}
		if seen == "" {
			t.Fatal("tasks/get never showed a step as the statusMessage while the task was working")
		}
		r := waitEnd(t, s, id)
		if r.Result.Status != "completed" || r.Result.StatusMessage != "step 10 of 10" || r.Result.Result.Content[0].Text != "10 steps" {
			t.Fatalf("finished: %s %q %+v, want completed with the last step", r.Result.Status, r.Result.StatusMessage, r.Result.Result)
		}
	})
	t.Run("a cancel stops a spinning guest and frees its instance", func(t *testing.T) {
		id := startTask(t, s, "alice", "spin_job", `{}`)
		time.Sleep(100 * time.Millisecond) // let the guest enter its loop
		taskCall(t, s, "alice", "tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id))
		if r := waitEnd(t, s, id); r.Result.Status != "cancelled" {
			t.Fatalf("spin_job after tasks/cancel: %s %+v", r.Result.Status, r.Result.Error)
		}
		// The one instance is free again: a plain call is served.
		if b := plainCall(t, s, "greet", `{"name":"next"}`); !strings.Contains(b, "Hello, next!") {
			t.Fatalf("greet after the cancel: %s", b)
		}
	})
	t.Run("a task waiting for input holds no instance", func(t *testing.T) {
		id := startTask(t, s, "alice", "confirm_delete", `{"filename":"a.txt"}`)
		r := waitStatus(t, s, id, "input_required")
		for range 3 { // with one instance, each would wait were it held
			if b := plainCall(t, s, "greet", `{"name":"meanwhile"}`); !strings.Contains(b, "Hello, meanwhile!") {
				t.Fatalf("greet while a task waits for input: %s", b)
			}
		}
		var key string
		for k := range r.Result.InputRequests {
			key = k
		}
		taskCall(t, s, "alice", "tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"confirm":true}}}`, id, key))
		if r := waitEnd(t, s, id); r.Result.Status != "completed" || r.Result.Result.Content[0].Text != "confirm: true" {
			t.Fatalf("after the answer: %s %+v", r.Result.Status, r.Result.Result)
		}
	})
	t.Run("unloading the plugin fails its tasks", func(t *testing.T) {
		waiting := startTask(t, s, "alice", "multi_input", `{}`)
		waitStatus(t, s, waiting, "input_required")
		running := startTask(t, s, "alice", "slow_compute", `{"seconds":60}`)
		if err := os.Remove(filepath.Join(s.dir, "conformance.wasm")); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{running, waiting} {
			failedWith(t, waitEnd(t, s, id), "The plugin conformance was unloaded.")
		}
	})
}

// TestTasksGuestLimits: the operator's tasks.deadline bounds a tool's own
// longer task deadline; tasks.maxPerPlugin bounds the plugin's unfinished
// tasks below the principal's limit; a plugin put in quarantine fails its running tasks.
func TestTasksGuestLimits(t *testing.T) {
	t.Run("tasks.deadline wins", func(t *testing.T) {
		s := startWire(t, wireAuth()+"tasks:\n  deadline: 1s\n", "conformance")
		failedWith(t, waitEnd(t, s, startTask(t, s, "alice", "slow_compute", `{"seconds":30}`)),
			"The task did not finish within its deadline of 1s.")
	})
	t.Run("limit per plugin, then quarantine", func(t *testing.T) {
		s := startWire(t, conformanceLimits("timeout: 300ms, quarantineAfter: 2")+wireAuth()+"tasks:\n  maxPerPlugin: 2\n", "conformance")
		id := startTask(t, s, "alice", "slow_compute", `{"seconds":60}`)
		second := startTask(t, s, "alice", "slow_compute", `{"seconds":60}`)
		r := taskCall(t, s, "alice", "tools/call", "slow_compute", `"name":"slow_compute","arguments":{"seconds":60}`)
		if r.Error == nil || r.Error.Code != -31429 || string(r.Error.Data) != `{"max":2,"scope":"plugin"}` {
			t.Fatalf("a third task of the plugin: want -31429 for the plugin, got %+v", r.Error)
		}
		for range 2 { // two timeouts in a row
			if b := plainCall(t, s, "bounded_job", `{"seconds":5}`); !strings.Contains(b, `"code":-32603`) {
				t.Fatalf("bounded_job past the call deadline: %s", b)
			}
		}
		failedWith(t, waitEnd(t, s, id), "The plugin conformance was quarantined after repeated failures.")
		failedWith(t, waitEnd(t, s, second), "The plugin conformance was quarantined after repeated failures.")
	})
}
