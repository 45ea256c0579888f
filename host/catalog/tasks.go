package catalog

import "github.com/corral-mcp/corral/abi"

// ToolTasks returns how the tool name runs as a task for p: its
// declared taskSupport ("" when forbidden) and its plugin. visible is
// false for a tool p may not see, which answers like a missing one.
func (s *Set) ToolTasks(p abi.Principal, name string) (support, plugin string, visible bool) {
	v := s.view(p)
	pr, ok := s.tools[name]
	if !ok || !v.Tool(pr.name, name) {
		return "", "", false
	}
	return s.taskSupport[name], pr.name, true
}
