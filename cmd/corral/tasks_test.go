package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// taskMeta is the _meta of a 2026-07-28 request declaring the tasks extension.
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// taskReply is a decoded JSON-RPC answer of the task tests.
type taskReply struct {
	Result struct {
		ResultType    string                     `json:"resultType"`
		TaskID        string                     `json:"taskId"`
		Status        string                     `json:"status"`
		StatusMessage string                     `json:"statusMessage"`
		TTLMs         *int64                     `json:"ttlMs"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		Result        *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// taskCall sends one task-era request as principal and decodes the answer.
func taskCall(t *testing.T, s *wireServer, principal, method, name, params string) taskReply {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, taskMeta)
	a := answerOf(t, s.post(t, principal, body, modernHeaders(method, name)))
	var r taskReply
	if err := json.Unmarshal([]byte(a.Body), &r); err != nil {
		t.Fatalf("%s: %v: %s", method, err, a.Body)
	}
	return r
}

func startTask(t *testing.T, s *wireServer, principal, tool, args string) string {
	t.Helper()
	r := taskCall(t, s, principal, "tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":%s`, tool, args))
	if r.Error != nil || r.Result.ResultType != "task" || r.Result.TaskID == "" || r.Result.Status != "working" {
		t.Fatalf("tools/call %s: want a working task, got %+v (error %+v)", tool, r.Result, r.Error)
	}
	return r.Result.TaskID
}

func getTask(t *testing.T, s *wireServer, principal, id string) taskReply {
	t.Helper()
	return taskCall(t, s, principal, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
}

// waitStatus polls task id until its status is want, failing on any
// other terminal status or after 20 s.
func waitStatus(t *testing.T, s *wireServer, id, want string) taskReply {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		r := getTask(t, s, "alice", id)
		if r.Error != nil {
			t.Fatalf("tasks/get: %+v", r.Error)
		}
		switch st := r.Result.Status; {
		case st == want:
			return r
		case st == "completed" || st == "failed" || st == "cancelled":
			t.Fatalf("task %s ended %s, want %s", id, st, want)
		}
	}
	t.Fatalf("task %s never reached %s", id, want)
	return taskReply{}
}

// TestTasksWire drives the tasks extension against bin/corral: every
// status, cancellation of a sleeping guest, input through tasks/update,
// isolation between principals, the per-principal limit, a task outliving
// its connection, input before the task, both eras, and tools/call
// without the extension.
func TestTasksWire(t *testing.T) {
	s := startWire(t, wireAuth()+"tasks:\n  maxPerPrincipal: 3\n", "conformance")

	t.Run("completed", func(t *testing.T) {
		id := startTask(t, s, "alice", "slow_compute", `{"seconds":0.3,"label":"x"}`)
		r := waitStatus(t, s, id, "completed")
		if r.Result.Result == nil || len(r.Result.Result.Content) != 1 || r.Result.Result.Content[0].Text != "computed x" || r.Result.ResultType != "complete" {
			t.Fatalf("completed task: %+v", r.Result)
		}
	})
	t.Run("tool error is completed", func(t *testing.T) {
		r := waitStatus(t, s, startTask(t, s, "alice", "failing_job", `{}`), "completed")
		if r.Result.Result == nil || !r.Result.Result.IsError {
			t.Fatalf("failing_job: %+v", r.Result)
		}
	})
	t.Run("trap is failed", func(t *testing.T) {
		r := waitStatus(t, s, startTask(t, s, "alice", "protocol_error_job", `{}`), "failed")
		if r.Result.Error == nil || r.Result.Error.Code != -32603 || r.Result.Result != nil {
			t.Fatalf("protocol_error_job: %+v", r.Result)
		}
	})
	t.Run("cancel a sleeping guest", func(t *testing.T) {
		id := startTask(t, s, "alice", "slow_compute", `{"seconds":60,"label":"long"}`)
		for range 2 { // idempotent
			r := taskCall(t, s, "alice", "tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id))
			if r.Error != nil || r.Result.ResultType != "complete" || r.Result.TaskID != "" {
				t.Fatalf("tasks/cancel: %+v %+v", r.Result, r.Error)
			}
		}
		waitStatus(t, s, id, "cancelled")
	})
	t.Run("input_required then working then completed", func(t *testing.T) {
		id := startTask(t, s, "alice", "multi_input", `{}`)
		r := waitStatus(t, s, id, "input_required")
		if len(r.Result.InputRequests) != 2 {
			t.Fatalf("want 2 input requests, got %v", r.Result.InputRequests)
		}
		var keys []string
		for k := range r.Result.InputRequests {
			keys = append(keys, k)
		}
		answer := func(k, name string) {
			r := taskCall(t, s, "alice", "tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"name":%q}}}`, id, k, name))
			if r.Error != nil || r.Result.ResultType != "complete" {
				t.Fatalf("tasks/update: %+v", r.Error)
			}
		}
		answer(keys[0], "one")
		if r := getTask(t, s, "alice", id); r.Result.Status != "input_required" || len(r.Result.InputRequests) != 1 || r.Result.InputRequests[keys[1]] == nil {
			t.Fatalf("after a partial answer: %+v", r.Result)
		}
		answer(keys[1], "two")
		r = waitStatus(t, s, id, "completed")
		if got := r.Result.Result.Content[0].Text; !strings.Contains(got, "one") || !strings.Contains(got, "two") {
			t.Fatalf("result %q lacks the answers", got)
		}
	})
	t.Run("input first, then the task", func(t *testing.T) {
		var round1 struct {
			Result struct {
				ResultType    string                     `json:"resultType"`
				TaskID        string                     `json:"taskId"`
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
				RequestState  string                     `json:"requestState"`
			} `json:"result"`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_task","arguments":{},` + taskMeta + `}}`
		a := answerOf(t, s.post(t, "alice", body, modernHeaders("tools/call", "test_tool_with_task")))
		if err := json.Unmarshal([]byte(a.Body), &round1); err != nil || round1.Result.ResultType != "input_required" ||
			round1.Result.TaskID != "" || round1.Result.InputRequests["user_name"] == nil {
			t.Fatalf("round 1: want input_required without a task, got %s", a.Body)
		}
		r := taskCall(t, s, "alice", "tools/call", "test_tool_with_task", fmt.Sprintf(
			`"name":"test_tool_with_task","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},"requestState":%q`,
			round1.Result.RequestState))
		if r.Error != nil || r.Result.ResultType != "task" || r.Result.TaskID == "" {
			t.Fatalf("round 2: want a task, got %+v (error %+v)", r.Result, r.Error)
		}
		r = waitStatus(t, s, r.Result.TaskID, "completed")
		if got := r.Result.Result.Content[0].Text; !strings.Contains(got, "Alice") {
			t.Fatalf("result %q lacks the name gathered before the task", got)
		}
	})
	t.Run("a task outlives its client's connection", func(t *testing.T) {
		// The creating request's connection closes with its answer; the
		// task goes on and is read over another connection.
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.5,"label":"alone"},` + taskMeta + `}}`
		req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+wireTokens["alice"])
		for k, v := range modernHeaders("tools/call", "slow_compute") {
			req.Header.Set(k, v)
		}
		once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := once.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r taskReply
		if err := json.Unmarshal([]byte(answerOf(t, resp).Body), &r); err != nil || r.Result.TaskID == "" {
			t.Fatalf("tools/call: %+v %v", r, err)
		}
		once.CloseIdleConnections()
		waitStatus(t, s, r.Result.TaskID, "completed")
	})
	t.Run("another principal's task answers like an unknown one", func(t *testing.T) {
		id := startTask(t, s, "alice", "slow_compute", `{"seconds":0,"label":"mine"}`)
		waitStatus(t, s, id, "completed")
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			foreign := taskCall(t, s, "bob", m, id, fmt.Sprintf(`"taskId":%q`, id))
			unknown := taskCall(t, s, "bob", m, "no-such-task", `"taskId":"no-such-task"`)
			if foreign.Error == nil || unknown.Error == nil || foreign.Error.Code != -32602 ||
				foreign.Error.Code != unknown.Error.Code || foreign.Error.Message != unknown.Error.Message ||
				strings.ReplaceAll(string(foreign.Error.Data), id, "no-such-task") != string(unknown.Error.Data) {
				t.Fatalf("%s: foreign %+v, unknown %+v", m, foreign.Error, unknown.Error)
			}
		}
	})
	t.Run("limit per principal", func(t *testing.T) {
		var ids []string
		for range 3 {
			ids = append(ids, startTask(t, s, "alice", "slow_compute", `{"seconds":60,"label":"hold"}`))
		}
		r := taskCall(t, s, "alice", "tools/call", "slow_compute", `"name":"slow_compute","arguments":{"seconds":60}`)
		if r.Error == nil || r.Error.Code != -31429 || !strings.Contains(string(r.Error.Data), `"principal"`) {
			t.Fatalf("fourth task: want -31429 for the principal, got %+v", r.Error)
		}
		for _, id := range ids {
			taskCall(t, s, "alice", "tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id))
			waitStatus(t, s, id, "cancelled")
		}
		waitStatus(t, s, startTask(t, s, "alice", "slow_compute", `{"seconds":0}`), "completed")
	})
	t.Run("2025-11-25 sessions get no tasks", func(t *testing.T) {
		sid := s.initSession(t, "alice")
		h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
		list := answerOf(t, s.post(t, "alice", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)).Body
		if !strings.Contains(list, `"slow_compute"`) || strings.Contains(list, `"execution"`) {
			t.Fatalf("2025-11-25 tools/list: want slow_compute without execution, got %.300s", list)
		}
		call := answerOf(t, s.post(t, "alice", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"label":"old"}}}`, h)).Body
		if !strings.Contains(call, "computed old") || strings.Contains(call, "taskId") {
			t.Fatalf("2025-11-25 tools/call: want a plain result, got %s", call)
		}
		get := answerOf(t, s.post(t, "alice", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"x"}}`, h)).Body
		if !strings.Contains(get, `"code":-32601`) {
			t.Fatalf("2025-11-25 tasks/get: want -32601, got %s", get)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + taskMeta + `}}`
		if modern := answerOf(t, s.post(t, "alice", body, modernHeaders("tools/list", ""))).Body; !strings.Contains(modern, `"execution":{"taskSupport":"optional"}`) {
			t.Fatalf("2026-07-28 tools/list: want execution.taskSupport, got %.300s", modern)
		}
	})
	t.Run("no extension: no task", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"label":"sync"},` + modernMeta + `}}`
		var r taskReply
		if err := json.Unmarshal([]byte(answerOf(t, s.post(t, "alice", body, modernHeaders("tools/call", "slow_compute"))).Body), &r); err != nil {
			t.Fatal(err)
		}
		if r.Result.ResultType != "complete" || r.Result.TaskID != "" || len(r.Result.Content) != 1 {
			t.Fatalf("without the extension: %+v", r.Result)
		}
		body = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x",` + modernMeta + `}}`
		if err := json.Unmarshal([]byte(answerOf(t, s.post(t, "alice", body, modernHeaders("tasks/get", "x"))).Body), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error == nil || r.Error.Code != -32021 {
			t.Fatalf("tasks/get without the extension: %+v", r.Error)
		}
		body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"failing_job","arguments":{},` + modernMeta + `}}`
		r = taskReply{}
		if err := json.Unmarshal([]byte(answerOf(t, s.post(t, "alice", body, modernHeaders("tools/call", "failing_job"))).Body), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), "io.modelcontextprotocol/tasks") {
			t.Fatalf("a required-task tool without the extension: %+v", r.Error)
		}
	})
}
