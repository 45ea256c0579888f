package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// The fixtures of the suite's tasks scenarios (io.modelcontextprotocol/tasks,
// SEP-2663), and corral's own (bounded_job, progress_job, spin_job). Each
// but greet declares task support, so a client that supports tasks gets a
// task for it and the call runs in the background.

var (
	optional = &abi.ToolExecution{TaskSupport: abi.TaskOptional}
	required = &abi.ToolExecution{TaskSupport: abi.TaskRequired}
)

// spins is what spin_job's loop changes, so that it is not optimized away.
var spins int64

// compute is slow_compute and bounded_job: it sleeps for seconds and
// answers with label.
func compute(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	var args struct {
		Seconds float64
		Label   string
	}
	_ = json.Unmarshal(r.Arguments, &args)
	// Short sleeps, so that a cancelled task's guest is interrupted at
	// the next one.
	end := time.Now().Add(time.Duration(args.Seconds * float64(time.Second)))
	for time.Now().Before(end) {
		time.Sleep(min(20*time.Millisecond, time.Until(end)))
	}
	return corral.ToolText("computed " + args.Label), nil
}

var taskTools = []tool{
	{abi.Tool{Name: "test_tool_with_task", Description: "Asks for a name on the call itself, then greets it from a task",
		Execution: required, InputFirst: true},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if name, ok := accepted(r.Input, "user_name", "name"); ok {
				return corral.ToolText("Hello, " + name + ", from a task!"), nil
			}
			return nil, corral.NeedInput("", askName)
		}},
	{abi.Tool{Name: "greet", Description: "Greets name (a sync-only tool)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			var args struct{ Name string }
			_ = json.Unmarshal(r.Arguments, &args)
			return corral.ToolText("Hello, " + args.Name + "!"), nil
		}},
	{abi.Tool{Name: "slow_compute", Description: "Sleeps for seconds, then answers with label",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`),
		// In a task it may run two minutes, past the call deadline.
		Execution: optional, TaskDeadlineMs: 120_000},
		compute},
	{abi.Tool{Name: "bounded_job", Description: "Sleeps for seconds, then answers with label; in a task it may run one second",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`),
		Execution:   optional, TaskDeadlineMs: 1000},
		compute},
	{abi.Tool{Name: "progress_job", Description: "Reports steps of progress with a message, a tenth of a second apart, then answers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer"}}}`),
		Execution:   required, TaskDeadlineMs: 60_000},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			var args struct{ Steps int }
			_ = json.Unmarshal(r.Arguments, &args)
			for i := 1; i <= args.Steps; i++ {
				_ = corral.Progress(float64(i), float64(args.Steps), fmt.Sprintf("step %d of %d", i, args.Steps))
				time.Sleep(100 * time.Millisecond)
			}
			return corral.ToolText(fmt.Sprintf("%d steps", args.Steps)), nil
		}},
	{abi.Tool{Name: "spin_job", Description: "Loops without end and without a host call; only a cancel or its deadline stops it",
		Execution: required, TaskDeadlineMs: 120_000},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			for spins >= 0 { // centuries before it overflows
				spins++
			}
			return corral.ToolText("spun"), nil
		}},
	{abi.Tool{Name: "failing_job", Description: "Fails with a tool error after about a second", Execution: required},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			time.Sleep(time.Second)
			return corral.ToolError("the job failed"), nil
		}},
	{abi.Tool{Name: "protocol_error_job", Description: "Traps, which the client sees as a protocol error", Execution: optional},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			panic("protocol_error_job always traps")
		}},
	{abi.Tool{Name: "confirm_delete", Description: "Asks the user to confirm deleting filename, then answers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"filename":{"type":"string"}}}`),
		Execution:   optional},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if ok, answered := accepted(r.Input, "confirm", "confirm"); answered {
				return corral.ToolText("confirm: " + ok), nil
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{
				"confirm": corral.Elicit("Delete the file?", schema("boolean", "confirm"))})
		}},
	{abi.Tool{Name: "multi_input", Description: "Asks two questions at once, then answers with both", Execution: optional},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			a, ok1 := accepted(r.Input, "first", "name")
			b, ok2 := accepted(r.Input, "second", "name")
			if ok1 && ok2 {
				return corral.ToolText(a + " and " + b), nil
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{
				"first":  corral.Elicit("First name?", schema("string", "name")),
				"second": corral.Elicit("Second name?", schema("string", "name"))})
		}},
}
