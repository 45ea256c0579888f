package tasks

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store in this process's memory, for a single process. It
// forgets tasks once they expire.
type Memory struct {
	now func() time.Time

	mu    sync.Mutex
	tasks map[string]*Task
	puts  int
}

// NewMemory returns an empty Memory store; now is its clock (nil is
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tasks: map[string]*Task{}}
}

// Put stores a copy of t.
func (s *Memory) Put(_ context.Context, t *Task) error {
	cp := *t
	cp.Pending = clone(t.Pending)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[t.ID] = &cp
	if s.puts++; s.puts%256 == 0 {
		s.sweep()
	}
	return nil
}

// sweep drops expired tasks.
func (s *Memory) sweep() {
	now := s.now()
	for id, t := range s.tasks {
		if !now.Before(t.Expires) {
			delete(s.tasks, id)
		}
	}
}

// Get returns a copy of task id.
func (s *Memory) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	cp := *t
	cp.Pending = clone(t.Pending)
	return &cp, nil
}

// Delete forgets task id.
func (s *Memory) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
	return nil
}
