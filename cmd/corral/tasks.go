package main

import (
	"github.com/corral-mcp/corral/host/cluster"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/tasks"
)

// newTasks returns the task manager: task state in memory on one
// process; in a cluster, in its JetStream (host/cluster's TaskStore, a
// Part), with cancels and answers carried to the replica running each task.
func (a *App) newTasks(c config.Tasks) *tasks.Manager {
	tc := tasks.Config{Deadline: c.Deadline, Keep: c.Keep, PollInterval: c.PollInterval,
		MaxPerPrincipal: c.MaxPerPrincipal, MaxPerPlugin: c.MaxPerPlugin}
	if a.cluster == nil {
		return tasks.New(tc, tasks.NewMemory(nil))
	}
	store := cluster.NewTaskStore(a.cluster, cluster.TaskOptions{TTL: c.Deadline + c.Keep, Logger: a.log})
	tc.Remote = store
	m := tasks.New(tc, store)
	store.Serve(m)
	a.parts = append(a.parts, store)
	return m
}

// failUnloaded fails the unfinished tasks of plugins no longer served.
func failUnloaded(m *tasks.Manager, removed []string) {
	for _, p := range removed {
		m.Fail(p, "The plugin "+p+" was unloaded.")
	}
}
