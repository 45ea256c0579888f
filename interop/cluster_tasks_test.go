package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tasks extension across the cluster's replicas (issue 19 item 4):
// a task runs on the replica that created it, its state is in JetStream,
// and a cancel or an answer reaching another replica goes to it over NATS.

// taskTokens are the bearer tokens of the tasks test's two principals.
var taskTokens = map[string]string{"alice": "alice's cluster token", "bob": "bob's cluster token"}

// taskMeta declares the tasks extension on a 2026-07-28 request.
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// bigLabel is the length of the label slow_compute echoes into the large
// result: over NATS's 1 MiB payload limit.
const bigLabel = 3 << 19

// taskCluster starts three replicas serving the conformance plugin to
// alice and bob, with arguments up to 4 MiB for the large result.
func taskCluster(t *testing.T) *cluster {
	t.Helper()
	if !clusterMode {
		t.Skip("the cluster tests run under make test-cluster (CORRAL_TEST_CLUSTER=1)")
	}
	if why := missingBuild(corralBin, conformanceWasm); why != "" {
		t.Fatal(why)
	}
	dir := t.TempDir()
	copyFile(t, conformanceWasm, filepath.Join(dir, "conformance.wasm"))
	var b strings.Builder
	b.WriteString(conformanceGrants + "    limits:\n      maxRequestBytes: 4194304\nauth:\n  tokens:\n")
	for _, p := range []string{"alice", "bob"} {
		sum := sha256.Sum256([]byte(taskTokens[p]))
		fmt.Fprintf(&b, "    - {sha256: %s, principal: %s}\n", hex.EncodeToString(sum[:]), p)
	}
	return startClusterT(t, dir, "tasks", b.String())
}

// taskAnswer is a decoded answer of a task request.
type taskAnswer struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	StatusMessage string                     `json:"statusMessage"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *struct {
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
	Error *rpcError `json:"error"`
}

// taskRequest sends method (on name) as principal to replica i and
// decodes the answer.
func taskRequest(t *testing.T, c *cluster, i int, principal, method, name, params string) (taskAnswer, *rpcError) {
	t.Helper()
	w := &wire{t: t}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, taskMeta)
	m := w.call(c.replicas[i].url, body, append(modernHeaders(method, name), "Authorization", "Bearer "+taskTokens[principal])...)
	var a taskAnswer
	if m.Error == nil {
		if err := json.Unmarshal(m.Result, &a); err != nil {
			t.Fatalf("%s on r%d: %v: %s", method, i+1, err, m.Result)
		}
	}
	return a, m.Error
}

// createTask calls tool with args as alice on replica i: a working task.
func createTask(t *testing.T, c *cluster, i int, tool, args string) string {
	t.Helper()
	a, e := taskRequest(t, c, i, "alice", "tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":%s`, tool, args))
	if e != nil || a.ResultType != "task" || a.TaskID == "" || a.Status != "working" {
		t.Fatalf("tools/call %s on r%d: %+v %v, want a working task", tool, i+1, a, e)
	}
	return a.TaskID
}

func getTaskOn(t *testing.T, c *cluster, i int, principal, id string) (taskAnswer, *rpcError) {
	t.Helper()
	return taskRequest(t, c, i, principal, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
}

// pollTask polls alice's task id on replica i until its status is want.
func pollTask(t *testing.T, c *cluster, i int, id, want string, within time.Duration) taskAnswer {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		a, e := getTaskOn(t, c, i, "alice", id)
		if e != nil {
			t.Fatalf("tasks/get on r%d: %v", i+1, e)
		}
		switch {
		case a.Status == want:
			return a
		case a.Status != "working" && a.Status != "input_required":
			t.Fatalf("task %s ended %s on r%d (%s), want %s", id, a.Status, i+1, a.StatusMessage, want)
		}
	}
	t.Fatalf("task %s not %s on r%d within %v", id, want, i+1, within)
	return taskAnswer{}
}

// TestClusterTasks: a task created on replica 1 is polled on replica 2
// and cancelled on replica 3, which interrupts the guest's loop on
// replica 1 (the task is cancelled only once the guest returned, long
// before its 60 s); another principal's get answers like a missing task
// on any replica; a task's input is answered through two other replicas;
// a result over NATS's payload limit is read through another replica; the
// task of a replica killed mid-run fails, saying so, instead of staying
// working; and a replica stopped gracefully fails its task as it leaves.
func TestClusterTasks(t *testing.T) {
	c := taskCluster(t)

	long := createTask(t, c, 0, "slow_compute", `{"seconds":60,"label":"long"}`)
	if a, e := getTaskOn(t, c, 1, "alice", long); e != nil || a.Status != "working" || a.TaskID != long {
		t.Fatalf("r1's task polled on r2: %+v %v", a, e)
	}
	for i := range 3 {
		_, foreign := getTaskOn(t, c, i, "bob", long)
		_, missing := getTaskOn(t, c, i, "bob", "no-such-task")
		if foreign == nil || missing == nil || foreign.Code != missing.Code || foreign.Message != missing.Message || foreign.Code != -32602 {
			t.Errorf("bob's get of alice's task on r%d: %+v; of a missing one: %+v; want the same -32602", i+1, foreign, missing)
		}
	}
	if _, e := taskRequest(t, c, 2, "bob", "tasks/cancel", long, fmt.Sprintf(`"taskId":%q`, long)); e == nil || e.Code != -32602 {
		t.Errorf("bob's cancel on r3: %+v, want -32602", e)
	}
	start := time.Now()
	for range 2 { // an acknowledgement, idempotent
		if a, e := taskRequest(t, c, 2, "alice", "tasks/cancel", long, fmt.Sprintf(`"taskId":%q`, long)); e != nil || a.ResultType != "complete" {
			t.Fatalf("tasks/cancel on r3: %+v %v", a, e)
		}
	}
	pollTask(t, c, 1, long, "cancelled", 20*time.Second)
	t.Logf("cancelled on r3, the guest on r1 interrupted, seen on r2: %v", time.Since(start).Round(time.Millisecond))

	asks := createTask(t, c, 0, "multi_input", `{}`)
	parked := pollTask(t, c, 1, asks, "input_required", 20*time.Second)
	if len(parked.InputRequests) != 2 {
		t.Fatalf("input requests read on r2: %v", parked.InputRequests)
	}
	names := map[string]string{}
	for k := range parked.InputRequests {
		names[k] = map[bool]string{true: "one", false: "two"}[strings.HasSuffix(k, "first")]
	}
	replica := 2
	for k, name := range names { // one answer through r3, the other through r2
		params := fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"name":%q}}}`, asks, k, name)
		if a, e := taskRequest(t, c, replica, "alice", "tasks/update", asks, params); e != nil || a.ResultType != "complete" {
			t.Fatalf("tasks/update on r%d: %+v %v", replica+1, a, e)
		}
		replica = 1
	}
	done := pollTask(t, c, 0, asks, "completed", 20*time.Second)
	if done.Result == nil || len(done.Result.Content) != 1 || done.Result.Content[0].Text != "one and two" {
		t.Fatalf("multi_input after answers on r3 and r2: %+v", done.Result)
	}

	big := createTask(t, c, 0, "slow_compute", fmt.Sprintf(`{"seconds":0,"label":%q}`, strings.Repeat("x", bigLabel)))
	res := pollTask(t, c, 2, big, "completed", 30*time.Second)
	if res.Result == nil || len(res.Result.Content) != 1 || res.Result.Content[0].Text != "computed "+strings.Repeat("x", bigLabel) {
		t.Fatalf("the large result read on r3: %d content items", len(res.Result.Content))
	}

	orphan := createTask(t, c, 0, "slow_compute", `{"seconds":60,"label":"orphan"}`)
	pollTask(t, c, 1, orphan, "working", 5*time.Second)
	_ = c.replicas[0].cmd.Process.Signal(syscall.SIGKILL)
	<-c.replicas[0].exited
	for end := time.Now().Add(40 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		a, e := getTaskOn(t, c, 1, "alice", orphan)
		if e != nil {
			t.Fatalf("tasks/get on r2 after r1 was killed: %v", e)
		}
		if a.Status == "failed" {
			if a.Error == nil || !strings.Contains(a.Error.Message, "stopped before the task finished") {
				t.Fatalf("the killed replica's task: %+v", a)
			}
			break
		}
		if a.Status != "working" || time.Now().After(end) {
			t.Fatalf("the killed replica's task on r2: %+v, want failed within 40 s", a)
		}
	}

	// Replica 2 stopped (SIGTERM) while it runs a task: it fails the task,
	// saying so, before it leaves, rather than wait for the guest (which
	// would hold its shutdown past the harness's patience).
	stopping := createTask(t, c, 1, "slow_compute", `{"seconds":60,"label":"stopping"}`)
	pollTask(t, c, 2, stopping, "working", 5*time.Second)
	c.replicas[1].stop()
	if err := c.replicas[1].err; err != nil {
		t.Errorf("r2 on SIGTERM with a running task: %v, want a clean exit within %v", err, stopTimeout)
	}
	a, e := getTaskOn(t, c, 2, "alice", stopping)
	if e != nil || a.Status != "failed" || a.Error == nil || a.Error.Message != "The server stopped before the task finished." {
		t.Fatalf("r2's task read on r3 after r2 stopped: %+v %v", a, e)
	}
}
