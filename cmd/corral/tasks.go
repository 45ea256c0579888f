package main

import (
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/tasks"
)

// newTasks returns the task manager of one process: task state in memory.
func newTasks(c config.Tasks) *tasks.Manager {
	return tasks.New(tasks.Config{Deadline: c.Deadline, Keep: c.Keep, PollInterval: c.PollInterval,
		MaxPerPrincipal: c.MaxPerPrincipal, MaxPerPlugin: c.MaxPerPlugin}, tasks.NewMemory(nil))
}

// failUnloaded fails the unfinished tasks of plugins no longer served.
func failUnloaded(m *tasks.Manager, removed []string) {
	if m == nil {
		return
	}
	for _, p := range removed {
		m.Fail(p, "The plugin "+p+" was unloaded.")
	}
}
