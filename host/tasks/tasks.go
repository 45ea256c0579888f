// Package tasks runs long tool calls as MCP tasks (the 2026-07-28
// extension io.modelcontextprotocol/tasks): a Manager starts the work in
// the background, keeps each task's state in a Store, parks it while it
// waits for client input, and bounds how many tasks each principal and each
// plugin may have running. The Store is an interface so that a cluster can
// keep task state where every replica reads it (host/cluster's TaskStore),
// and a Remote carries a cancel or an answer to the replica running the
// task; Memory serves one process.
package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Status is a task's state.
type Status string

// The statuses of the extension.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Task is the state of one task as tasks/get shows it.
type Task struct {
	ID     string
	Owner  string // the principal that created it; nobody else sees it
	Plugin string
	Status Status
	// Message is the optional statusMessage.
	Message string
	Created time.Time
	Updated time.Time
	// Expires is when the task is forgotten: Created plus its ttlMs.
	Expires time.Time
	// Result is the CallToolResult object of a completed task.
	Result json.RawMessage
	// Error is the JSON-RPC error object of a failed task.
	Error json.RawMessage
	// Pending holds the outstanding input requests of an input_required
	// task, by the keys the client answers with.
	Pending map[string]json.RawMessage
	// Runner names the process running the task, as a Store shared by a
	// cluster's replicas records it (the Remote's address); "" in a
	// process's own store.
	Runner string
}

// Store keeps task state. Get of a task that was never put, or that has
// expired, returns ErrNotFound.
type Store interface {
	Put(ctx context.Context, t *Task) error
	Get(ctx context.Context, id string) (*Task, error)
	Delete(ctx context.Context, id string) error
}

// Remote reaches the process running a task that another process of a
// cluster started: a cancel or an answer that arrives where the task does
// not run goes there. A Manager on one process has none.
type Remote interface {
	// Cancel asks the runner of the unfinished task t to cancel it.
	Cancel(ctx context.Context, t *Task) error
	// Update gives the runner of the input_required task t answers to its
	// input requests (Manager.Update's responses).
	Update(ctx context.Context, t *Task, responses map[string]json.RawMessage) error
}

// ErrNotFound is returned for a task that does not exist, has expired, or
// belongs to another principal: the three answer alike.
var ErrNotFound = errors.New("tasks: task not found")

// LimitError is returned by Start when a principal or a plugin already has
// its maximum of unfinished tasks.
type LimitError struct {
	Scope string // "principal" or "plugin"
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("tasks: the %s already has %d unfinished tasks", e.Scope, e.Max)
}

// Outcome is what one run of the work produced: exactly one of Result
// (a CallToolResult object), Error (a JSON-RPC error object) or Requests
// (the input the work needs before it can go on; State is handed back with
// the answers).
type Outcome struct {
	Result   json.RawMessage
	Error    json.RawMessage
	Requests map[string]json.RawMessage
	State    *string
}

// Resume is the input a parked task was given: the answers, by the keys
// the work asked with, and the state it returned.
type Resume struct {
	Responses map[string]json.RawMessage
	State     *string
}

// Work runs a task's call once. in is nil on the first run. status sets
// the task's statusMessage (the work's progress); it is cheap to call
// often, the Manager stores at most one message per poll interval. Work
// must return when ctx is done (the task was cancelled or reached its
// deadline).
type Work func(ctx context.Context, in *Resume, status func(message string)) Outcome

// Config bounds the tasks of a Manager.
type Config struct {
	// Deadline bounds a task from creation to its result, input waits
	// included (DefaultDeadline).
	Deadline time.Duration
	// Keep is how long a finished task's result stays readable after the
	// deadline could have passed: a task's ttlMs is Deadline plus Keep
	// (DefaultKeep).
	Keep time.Duration
	// PollInterval is the pollIntervalMs suggested to clients
	// (DefaultPollInterval), and the least time between two stores of a
	// task's statusMessage.
	PollInterval time.Duration
	// MaxPerPrincipal and MaxPerPlugin bound the unfinished tasks of one
	// principal and of one plugin (DefaultMaxPerPrincipal, DefaultMaxPerPlugin).
	MaxPerPrincipal int
	MaxPerPlugin    int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Remote reaches the tasks that another process runs, with a Store
	// that those processes share; nil: every task runs here.
	Remote Remote
}

// Defaults of Config.
const (
	DefaultDeadline        = 10 * time.Minute
	DefaultKeep            = 15 * time.Minute
	DefaultPollInterval    = 500 * time.Millisecond
	DefaultMaxPerPrincipal = 16
	DefaultMaxPerPlugin    = 64
)

// Manager runs tasks. It is safe for concurrent use.
type Manager struct {
	cfg   Config
	store Store

	mu        sync.Mutex
	live      map[string]*live // unfinished tasks started here
	principal map[string]int
	plugin    map[string]int

	runs sync.WaitGroup // the tasks' goroutines, for Stop
}

// live is the in-process side of an unfinished task.
type live struct {
	owner, plugin string
	// task is the record, changed under the Manager's lock; seq counts
	// its changes. Its snapshots are stored outside that lock (a
	// cluster's Store is a network round trip), one at a time under put,
	// and one older than the last stored (written) is dropped.
	task         *Task
	seq, written uint64
	put          sync.Mutex
	cancel       context.CancelFunc
	cancelled    bool   // a client asked to cancel
	reason       string // set by Fail: why the task failed
	// The parked round: where its answers go, its outstanding requests by
	// client key, the work's key for each, and the answers given so far.
	input   chan map[string]json.RawMessage
	pending map[string]json.RawMessage
	names   map[string]string
	got     map[string]json.RawMessage
	// The statusMessage: the latest the work reported, when one was last
	// stored, and the store scheduled for the end of the poll interval.
	message string
	stored  time.Time
	flush   *time.Timer
}

// New returns a Manager keeping state in store.
func New(cfg Config, store Store) *Manager {
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxPerPrincipal <= 0 {
		cfg.MaxPerPrincipal = DefaultMaxPerPrincipal
	}
	if cfg.MaxPerPlugin <= 0 {
		cfg.MaxPerPlugin = DefaultMaxPerPlugin
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, store: store, live: map[string]*live{},
		principal: map[string]int{}, plugin: map[string]int{}}
}

// PollInterval is the interval suggested to clients.
func (m *Manager) PollInterval() time.Duration { return m.cfg.PollInterval }

// Deadline is the longest a task may run, input waits included: the
// operator's tasks.deadline.
func (m *Manager) Deadline() time.Duration { return m.cfg.Deadline }

// TTL is the ttlMs of every task.
func (m *Manager) TTL() time.Duration { return m.cfg.Deadline + m.cfg.Keep }

// Start creates a task for owner on plugin, stores it (so a tasks/get right
// after Start finds it), and runs work in the background until it finishes,
// is cancelled, or reaches the deadline.
func (m *Manager) Start(owner, plugin string, work Work) (*Task, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	now := m.cfg.Now()
	t := &Task{ID: id, Owner: owner, Plugin: plugin, Status: Working,
		Created: now, Updated: now, Expires: now.Add(m.TTL())}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Deadline)
	cp := *t
	l := &live{owner: owner, plugin: plugin, cancel: cancel, task: &cp}
	m.mu.Lock()
	switch {
	case m.principal[owner] >= m.cfg.MaxPerPrincipal:
		m.mu.Unlock()
		cancel()
		return nil, &LimitError{Scope: "principal", Max: m.cfg.MaxPerPrincipal}
	case m.plugin[plugin] >= m.cfg.MaxPerPlugin:
		m.mu.Unlock()
		cancel()
		return nil, &LimitError{Scope: "plugin", Max: m.cfg.MaxPerPlugin}
	}
	m.principal[owner]++
	m.plugin[plugin]++
	m.live[id] = l
	m.mu.Unlock()
	if err := m.store.Put(context.Background(), t); err != nil {
		m.finish(id, l)
		cancel()
		return nil, fmt.Errorf("tasks: store: %w", err)
	}
	m.runs.Add(1)
	go func() {
		defer m.runs.Done()
		m.run(ctx, l, work)
	}()
	return t, nil
}

// run drives one task to a terminal status.
func (m *Manager) run(ctx context.Context, l *live, work Work) {
	defer l.cancel()
	defer m.finish(l.task.ID, l)
	status := m.status(l)
	var in *Resume
	for round := 1; ; round++ {
		out := work(ctx, in, status)
		if ctx.Err() != nil {
			m.settle(l, m.stopped(l, ctx))
			return
		}
		switch {
		case out.Requests == nil && out.Error != nil:
			m.settle(l, func(t *Task) { t.Status, t.Error, t.Message = Failed, out.Error, l.message })
			return
		case out.Requests == nil:
			m.settle(l, func(t *Task) { t.Status, t.Result, t.Message = Completed, out.Result, l.message })
			return
		}
		// Keys are unique over the task's life: each round's keys carry
		// the round number, mapped back before the work sees them.
		pending := make(map[string]json.RawMessage, len(out.Requests))
		names := make(map[string]string, len(out.Requests))
		for k, r := range out.Requests {
			ck := fmt.Sprintf("r%d.%s", round, k)
			pending[ck], names[ck] = r, k
		}
		ch := make(chan map[string]json.RawMessage, 1)
		m.mu.Lock()
		l.input, l.pending, l.names, l.got = ch, pending, names, nil
		put := m.changeLocked(l, func(t *Task) { t.Status, t.Pending = InputRequired, clone(pending) })
		m.mu.Unlock()
		put()
		var got map[string]json.RawMessage
		select {
		case got = <-ch:
		case <-ctx.Done():
			m.settle(l, m.stopped(l, ctx))
			return
		}
		in = &Resume{Responses: got, State: out.State}
		m.settle(l, func(t *Task) { t.Status, t.Pending = Working, nil })
	}
}

// status returns the function the work of task t reports its progress
// with. The latest message becomes the statusMessage; it is stored at once
// when none was stored for a poll interval, otherwise at the end of the
// interval, so that a chatty guest costs the Store one write per interval.
func (m *Manager) status(l *live) func(string) {
	store := func() func() { // with m.mu held; returns the put to make after
		l.flush = nil
		if l.task.Status.Terminal() || l.task.Message == l.message {
			return func() {}
		}
		l.stored = time.Now()
		return m.changeLocked(l, func(t *Task) { t.Message = l.message })
	}
	return func(message string) {
		m.mu.Lock()
		if l.task.Status.Terminal() || message == l.message {
			m.mu.Unlock()
			return
		}
		l.message = message
		if l.flush != nil {
			m.mu.Unlock()
			return // the scheduled store will take it
		}
		wait := time.Until(l.stored.Add(m.cfg.PollInterval))
		if wait <= 0 {
			put := store()
			m.mu.Unlock()
			put()
			return
		}
		l.flush = time.AfterFunc(wait, func() {
			m.mu.Lock()
			put := store()
			m.mu.Unlock()
			put()
		})
		m.mu.Unlock()
	}
}

// stopped is the terminal change for a task whose context ended: cancelled
// when a client asked, failed at the deadline.
func (m *Manager) stopped(l *live, ctx context.Context) func(*Task) {
	m.mu.Lock()
	asked, reason := l.cancelled, l.reason
	l.input = nil
	m.mu.Unlock()
	if asked && reason == "" {
		return func(t *Task) { t.Status, t.Pending = Cancelled, nil }
	}
	msg := reason
	if msg == "" {
		msg = "The task did not finish within its deadline of " + m.cfg.Deadline.String() + "."
	}
	e, _ := json.Marshal(map[string]any{"code": -32603, "message": msg})
	return func(t *Task) { t.Status, t.Pending, t.Error, t.Message = Failed, nil, e, msg }
}

// settle applies change to the task and stores it.
func (m *Manager) settle(l *live, change func(*Task)) {
	m.mu.Lock()
	put := m.changeLocked(l, change)
	m.mu.Unlock()
	put()
}

// changeLocked applies change to the task's record and returns the put
// that stores a snapshot of it, to be called without m.mu: a slow Store
// holds up no other task, and the snapshot is dropped if a newer one was
// stored meanwhile (it holds this change too).
func (m *Manager) changeLocked(l *live, change func(*Task)) (put func()) {
	change(l.task)
	l.task.Updated = m.cfg.Now()
	l.seq++
	seq, cp := l.seq, *l.task
	return func() {
		l.put.Lock()
		defer l.put.Unlock()
		if seq < l.written {
			return
		}
		l.written = seq
		_ = m.store.Put(context.Background(), &cp) // a Memory store never fails; a cluster's retries
	}
}

func clone(in map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func (m *Manager) finish(id string, l *live) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live[id] != l {
		return
	}
	if l.flush != nil {
		l.flush.Stop()
	}
	delete(m.live, id)
	m.principal[l.owner]--
	if m.principal[l.owner] <= 0 {
		delete(m.principal, l.owner)
	}
	m.plugin[l.plugin]--
	if m.plugin[l.plugin] <= 0 {
		delete(m.plugin, l.plugin)
	}
}

// Get returns owner's task id.
func (m *Manager) Get(ctx context.Context, owner, id string) (*Task, error) {
	t, err := m.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Owner != owner {
		return nil, ErrNotFound
	}
	if !m.cfg.Now().Before(t.Expires) {
		_ = m.store.Delete(ctx, id)
		return nil, ErrNotFound
	}
	return t, nil
}

// Cancel asks owner's task id to stop; a finished task is left as it is.
// A task another process runs is cancelled through the Remote.
func (m *Manager) Cancel(ctx context.Context, owner, id string) error {
	t, err := m.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	l := m.live[id]
	if l != nil {
		l.cancelled = true
	}
	m.mu.Unlock()
	switch {
	case l != nil:
		l.cancel()
	case m.cfg.Remote != nil && !t.Status.Terminal():
		return m.cfg.Remote.Cancel(ctx, t)
	}
	return nil
}

// Update gives owner's input_required task id answers to its outstanding
// requests. Keys that are not outstanding are ignored; the task resumes
// once every outstanding request has an answer. The answers to a task
// another process runs go there through the Remote.
func (m *Manager) Update(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error {
	t, err := m.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	if l == nil {
		if m.cfg.Remote != nil && t.Status == InputRequired {
			return m.cfg.Remote.Update(ctx, t, responses)
		}
		return nil
	}
	m.mu.Lock()
	put := m.answerLocked(l, responses)
	m.mu.Unlock()
	put()
	return nil
}

// answerLocked records the responses to l's outstanding requests (see
// Update) and returns the put of the changed record.
func (m *Manager) answerLocked(l *live, responses map[string]json.RawMessage) (put func()) {
	none := func() {}
	if l.input == nil {
		return none
	}
	answered := false
	for k, v := range responses {
		if _, ok := l.pending[k]; ok {
			delete(l.pending, k)
			if l.got == nil {
				l.got = map[string]json.RawMessage{}
			}
			l.got[l.names[k]] = v
			answered = true
		}
	}
	switch {
	case !answered:
		return none
	case len(l.pending) > 0:
		return m.changeLocked(l, func(t *Task) { t.Pending = clone(l.pending) })
	}
	l.input <- l.got
	l.input, l.got = nil, nil
	return none
}

// Fail ends every unfinished task of plugin with message: its plugin was
// quarantined or unloaded.
func (m *Manager) Fail(plugin, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.live {
		if l.plugin == plugin && l.reason == "" {
			l.reason = message
			l.cancel()
		}
	}
}

// Stop ends every unfinished task with message and waits until each has
// stored its end, or ctx is done: the server is stopping. A running guest
// is interrupted rather than hold the shutdown, and a client polling
// through another replica of a cluster reads why its task failed. Start
// no task once Stop is called.
func (m *Manager) Stop(ctx context.Context, message string) {
	m.mu.Lock()
	for _, l := range m.live {
		if l.reason == "" {
			l.reason = message
		}
		l.cancel()
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func newID() (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("tasks: id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
