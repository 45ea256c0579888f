package catalog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// deadlineProvider records the TaskDeadline of the calls it serves.
type deadlineProvider struct {
	*catalogtest.Provider
	got []time.Duration
}

func (p *deadlineProvider) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	p.got = append(p.got, c.TaskDeadline)
	return p.Provider.Call(ctx, c)
}

// TestToolTaskDeadline: a tool's taskDeadlineMs (ABI 1.4) is the
// ToolTask's Deadline, reaches the provider only on a call that asks for
// it, never shows in tools/list, and is refused out of range or on a tool
// without task support.
func TestToolTaskDeadline(t *testing.T) {
	tool := func(support string, ms int64) abi.Manifest {
		var ex *abi.ToolExecution
		if support != "" {
			ex = &abi.ToolExecution{TaskSupport: support}
		}
		return abi.Manifest{Name: "m", Version: "1", ABI: abi.Major,
			Tools: []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: ex, TaskDeadlineMs: ms}}}
	}
	for _, tt := range []struct {
		name string
		m    abi.Manifest
		want string
	}{
		{"negative", tool(abi.TaskOptional, -1), `tool "t": taskDeadlineMs -1 is not between 1 and 86400000`},
		{"over a day", tool(abi.TaskRequired, 86400001), "taskDeadlineMs 86400001 is not between"},
		{"no task support", tool("", 1000), `tool "t": taskDeadlineMs needs execution.taskSupport optional or required`},
		{"forbidden", tool(abi.TaskForbidden, 1000), "needs execution.taskSupport"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalog.NewSet([]catalog.Provider{&catalogtest.Provider{M: tt.m}}, catalog.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}

	p := &deadlineProvider{Provider: &catalogtest.Provider{M: tool(abi.TaskOptional, 1500),
		Tool: func(context.Context, abi.CallToolRequest) (any, error) {
			return map[string]any{"content": []any{}}, nil
		}}}
	s := mustSet(t, catalog.Options{}, p)
	tt, visible := s.ToolTask(catalog.Anonymous(), "t")
	if !visible || tt.Deadline != 1500*time.Millisecond || tt.Support != abi.TaskOptional {
		t.Fatalf("ToolTask = %+v, %v; want optional with a 1.5s deadline", tt, visible)
	}
	page, err := s.List(context.Background(), anon, catalog.ListTools, "")
	if err != nil || len(page.Items) != 1 || strings.Contains(string(page.Items[0]), "taskDeadline") {
		t.Fatalf("tools/list shows the host's field: %s (%v)", page.Items, err)
	}
	plain, task := anon, anon
	task.TaskDeadline = tt.Deadline
	for _, r := range []catalog.Request{plain, task} {
		if _, err := s.CallTool(context.Background(), r, "t", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.got) != 2 || p.got[0] != 0 || p.got[1] != 1500*time.Millisecond {
		t.Fatalf("the provider saw task deadlines %v, want [0 1.5s]", p.got)
	}
}
