package catalog

import "github.com/corral-mcp/corral/abi"

// ToolTask is how a tool runs as a task.
type ToolTask struct {
	// Support is abi.TaskOptional or abi.TaskRequired; "" never makes a
	// task.
	Support string
	// InputFirst is abi.Tool.InputFirst.
	InputFirst bool
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
	return ToolTask{Support: s.taskSupport[name], InputFirst: s.inputFirst[name], Plugin: pr.name}, true
}
