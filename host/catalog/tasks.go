package catalog

import (
	"time"

	"github.com/corral-mcp/corral/abi"
)

// maxTaskDeadlineMs bounds a tool's taskDeadlineMs: a day, the longest
// tasks.deadline an operator may set.
const maxTaskDeadlineMs = 24 * 60 * 60 * 1000

// ToolTask says whether and how a tool runs as an MCP task.
type ToolTask struct {
	// Support is abi.TaskOptional or abi.TaskRequired; "" never makes a
	// task.
	Support string
	// InputFirst is abi.Tool.InputFirst.
	InputFirst bool
	// Deadline is abi.Tool.TaskDeadlineMs: each run of the guest inside a
	// task has it in place of the plugin's call deadline; 0 keeps the call
	// deadline.
	Deadline time.Duration
	// Plugin owns the tool.
	Plugin string
}

// ToolTask returns how the tool name runs as a task for p. visible is
// false for a tool p may not see, which answers like a missing one.
func (s *Set) ToolTask(p abi.Principal, name string) (tt ToolTask, visible bool) {
	v := s.view(p)
	pr, ok := s.tools[name]
	if !ok || !v.Tool(pr.name, name) {
		return ToolTask{}, false
	}
	return ToolTask{Support: s.taskSupport[name], InputFirst: s.inputFirst[name],
		Deadline: s.taskLimit[name], Plugin: pr.name}, true
}
