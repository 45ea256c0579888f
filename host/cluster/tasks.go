package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/tasks"
)

// The tasks of a cluster (docs/tasks.md, *Across replicas*): a task runs
// on the replica that created it, its state is shared, and a cancel or an
// answer that reaches another replica goes to the one running it.
//
//   - "<name>_tasks", a KV bucket: the record of task <id> under "t.<id>",
//     kept for the tasks' ttlMs (the bucket's TTL) after its last change;
//   - "<name>_task_results", an Object Store: the result (or error) of a
//     task whose record would exceed the NATS payload limit, object <id>,
//     kept as long and deleted with the record;
//   - "<name>_task_runners", a KV bucket of leases: each process running
//     tasks keeps its key fresh (the bucket's TTL is leaseTTL, renewed
//     every third of it), so a task whose runner's lease is gone is failed by
//     whichever replica reads it next, not left working for ever;
//   - "<name>.tasks.<runner>", the subject on which each process takes the
//     cancels and answers for its tasks (NATS request/reply).
const (
	// taskVersion is the version of a task record and of a message to a
	// runner; a record of another version is not read.
	taskVersion = 1
	// leaseTTL is how long a runner's lease lasts unrefreshed: a replica
	// that stops (or loses NATS) this long has its tasks failed.
	// It is renewed every third of that.
	leaseTTL = 15 * time.Second
	// finalRetry is how long a task's last change is tried again while
	// NATS is away (every 40th of it).
	finalRetry = 10 * time.Second
	// resultTimeout bounds the writing or reading of one result in the
	// Object Store (up to limits.maxResponseBytes).
	resultTimeout = 30 * time.Second
	// recordRoom is what a record may take beside the subject and headers
	// of its message before its result goes to the Object Store.
	recordRoom = 4 << 10
)

// errRunnerGone is the message of a task whose runner stopped.
const errRunnerGone = "The replica running this task stopped before the task finished."

// taskID is the syntax of the ids tasks.Manager mints (base64url): any
// other id names no task, and never reaches a KV key or a subject.
var taskID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// TaskOptions configure a TaskStore.
type TaskOptions struct {
	// TTL is every task's ttlMs (tasks.Manager's TTL): how long a record
	// and its result are kept after the task's last change.
	TTL time.Duration
	// Lease is how long a runner's lease lasts unrefreshed (default
	// leaseTTL); it is refreshed every third of it. It is the lease
	// bucket's TTL, so every process of a cluster must have the same: only
	// tests shorten it.
	Lease time.Duration
	// Logger receives the store's events; nil discards.
	Logger *slog.Logger
}

// TaskStore is host/tasks' Store and Remote on a cluster's JetStream: the
// state of every task in the bucket "<name>_tasks", so a task created
// through one replica is read through any other, and its cancels and
// answers carried over NATS to the process running it. It is a Part of the
// App: Start takes this process's requests and keeps its lease.
type TaskStore struct {
	c      *Conn
	opts   TaskOptions
	log    *slog.Logger
	prefix string // the buckets' and subjects' names start with it
	runner string // this process: its replica's tag and 32 random bits
	mgr    *tasks.Manager

	mu      sync.Mutex
	records jetstream.KeyValue // nil until bound
	leases  jetstream.KeyValue
	results jetstream.ObjectStore

	sub  *nats.Subscription
	stop context.CancelFunc
	done chan struct{}
}

// NewTaskStore returns the task store of this process on c. Serve names
// the Manager that runs its tasks.
func NewTaskStore(c *Conn, opts TaskOptions) *TaskStore {
	if opts.Lease <= 0 {
		opts.Lease = leaseTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand does not fail
	return &TaskStore{c: c, opts: opts, log: opts.Logger, prefix: c.opts.Cluster.Name,
		runner: ReplicaTag(c.opts.Cluster.Replica) + hex.EncodeToString(r[:])}
}

// Serve sets the Manager whose tasks run in this process: the cancels and
// answers other replicas forward here go to it. Call it before Start.
func (s *TaskStore) Serve(m *tasks.Manager) { s.mgr = m }

// taskRecord is a task in the bucket, version taskVersion.
type taskRecord struct {
	V       int                        `json:"v"`
	Owner   string                     `json:"owner"`
	Plugin  string                     `json:"plugin"`
	Status  tasks.Status               `json:"status"`
	Message string                     `json:"message,omitempty"`
	Created time.Time                  `json:"created"`
	Updated time.Time                  `json:"updated"`
	Expires time.Time                  `json:"expires"`
	Result  json.RawMessage            `json:"result,omitempty"`
	Error   json.RawMessage            `json:"error,omitempty"`
	Pending map[string]json.RawMessage `json:"pending,omitempty"`
	Runner  string                     `json:"runner"`
	// Spilled says the result and error are in the object of the task's
	// id, a spilled value.
	Spilled bool `json:"spilled,omitempty"`
}

// spilled is the object of a spilled record.
type spilled struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func recordOf(t *tasks.Task) taskRecord {
	return taskRecord{V: taskVersion, Owner: t.Owner, Plugin: t.Plugin, Status: t.Status, Message: t.Message,
		Created: t.Created, Updated: t.Updated, Expires: t.Expires, Result: t.Result, Error: t.Error,
		Pending: t.Pending, Runner: t.Runner}
}

func (r *taskRecord) task(id string) *tasks.Task {
	return &tasks.Task{ID: id, Owner: r.Owner, Plugin: r.Plugin, Status: r.Status, Message: r.Message,
		Created: r.Created, Updated: r.Updated, Expires: r.Expires, Result: r.Result, Error: r.Error,
		Pending: r.Pending, Runner: r.Runner}
}

func taskKey(id string) string { return "t." + id }

// bind makes (or updates) and opens the buckets, once; while NATS is away
// it fails at once.
func (s *TaskStore) bind(ctx context.Context) (records, leases jetstream.KeyValue, results jetstream.ObjectStore, err error) {
	if s.c.nc == nil || !s.c.nc.IsConnected() {
		return nil, nil, nil, ErrUnavailable
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records != nil {
		return s.records, s.leases, s.results, nil
	}
	rec, err := s.c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: s.prefix + "_tasks", Description: "corral tasks: one record per task", History: 1,
		TTL: s.opts.TTL, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cluster: task bucket: %w", err)
	}
	lea, err := s.c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: s.prefix + "_task_runners", Description: "corral task runners' leases", History: 1,
		TTL: s.opts.Lease, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cluster: task lease bucket: %w", err)
	}
	res, err := s.c.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: s.prefix + "_task_results", Description: "corral task results too large for their record",
		TTL: s.opts.TTL, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cluster: task result bucket: %w", err)
	}
	s.records, s.leases, s.results = rec, lea, res
	return rec, lea, res, nil
}

func (s *TaskStore) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.c.opts.Timeout)
}

// Put implements tasks.Store: the record of t, run by this process. A
// record whose result would take it over the NATS payload limit keeps the
// result in the Object Store. A finished task's record is final: a change
// that comes after it (from a runner whose lease lapsed, its task failed
// by another replica meanwhile) is dropped. A task's last change is tried
// again through a NATS outage of up to finalRetry: lost, the task would
// read working until its ttlMs.
func (s *TaskStore) Put(ctx context.Context, t *tasks.Task) error {
	end := time.Now().Add(finalRetry)
	for {
		err := s.put(ctx, t)
		if err == nil {
			return nil
		}
		if !t.Status.Terminal() || errors.Is(err, errTooLarge) || time.Now().After(end) || ctx.Err() != nil {
			// The Manager goes on: say it here.
			s.log.Warn("cluster: a task's state not stored", "task", t.ID, "status", t.Status, "err", err)
			return err
		}
		time.Sleep(finalRetry / 40)
	}
}

// errTooLarge: a record over the NATS payload limit even without its result.
var errTooLarge = errors.New("over the NATS payload limit")

func (s *TaskStore) put(parent context.Context, t *tasks.Task) error {
	bctx, cancel := s.ctx(parent)
	records, _, results, err := s.bind(bctx)
	cancel()
	if err != nil {
		return err
	}
	rec := recordOf(t)
	rec.Runner = s.runner
	b, err := s.encode(parent, results, t.ID, &rec)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx(parent) // after the result's own time
	defer cancel()
	if s.tooLarge(b) {
		return fmt.Errorf("cluster: task record %s: %d bytes: %w", t.ID, len(b), errTooLarge)
	}
	for range casAttempts {
		cur, rev, err := s.read(ctx, records, t.ID)
		switch {
		case errors.Is(err, tasks.ErrNotFound):
			_, err = records.Create(ctx, taskKey(t.ID), b)
		case err != nil:
			return err
		case cur.Status.Terminal():
			s.log.Debug("cluster: a change to a finished task dropped", "task", t.ID, "status", t.Status)
			return nil
		default:
			_, err = records.Update(ctx, taskKey(t.ID), b, rev)
		}
		if !casLost(err) {
			if err != nil {
				return fmt.Errorf("cluster: task record %s: %w", t.ID, err)
			}
			return nil
		}
	}
	return fmt.Errorf("cluster: task record %s: too many concurrent changes", t.ID)
}

// tooLarge reports whether a record of b bytes would exceed the NATS
// payload limit.
func (s *TaskStore) tooLarge(b []byte) bool { return int64(len(b)+recordRoom) > s.c.nc.MaxPayload() }

// encode returns rec's bytes. A record over the payload limit keeps its
// result and error in the object of the task's id, written within
// resultTimeout; a result that cannot be stored there fails the task,
// saying so, rather than leave it working.
func (s *TaskStore) encode(parent context.Context, results jetstream.ObjectStore, id string, rec *taskRecord) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("cluster: task record: %w", err)
	}
	if !s.tooLarge(b) || len(rec.Result)+len(rec.Error) == 0 {
		return b, nil
	}
	obj, err := json.Marshal(spilled{Result: rec.Result, Error: rec.Error})
	if err != nil {
		return nil, fmt.Errorf("cluster: task result: %w", err)
	}
	ctx, cancel := context.WithTimeout(parent, resultTimeout)
	defer cancel()
	if _, err := results.PutBytes(ctx, id, obj); err != nil {
		s.log.Warn("cluster: a task's result not stored", "task", id, "bytes", len(obj), "err", err)
		msg := fmt.Sprintf("The task's result (%d bytes) could not be stored.", len(obj))
		e, _ := json.Marshal(map[string]any{"code": -32603, "message": msg})
		rec.Status, rec.Message, rec.Result, rec.Error = tasks.Failed, msg, nil, e
	} else {
		rec.Result, rec.Error, rec.Spilled = nil, nil, true
	}
	if b, err = json.Marshal(rec); err != nil {
		return nil, fmt.Errorf("cluster: task record: %w", err)
	}
	return b, nil
}

// read returns task id's record and its revision.
func (s *TaskStore) read(ctx context.Context, records jetstream.KeyValue, id string) (*taskRecord, uint64, error) {
	e, err := records.Get(ctx, taskKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, tasks.ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("cluster: task record %s: %w", id, err)
	}
	var rec taskRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return nil, 0, fmt.Errorf("cluster: task record %s: %w", id, err)
	}
	if rec.V != taskVersion {
		return nil, 0, fmt.Errorf("cluster: task record %s: version %d, this replica reads %d", id, rec.V, taskVersion)
	}
	return &rec, e.Revision(), nil
}

// Get implements tasks.Store. An unfinished task whose runner's lease is
// gone is failed here, with a message that says so.
func (s *TaskStore) Get(parent context.Context, id string) (*tasks.Task, error) {
	if !taskID.MatchString(id) {
		return nil, tasks.ErrNotFound
	}
	ctx, cancel := s.ctx(parent)
	defer cancel()
	records, leases, results, err := s.bind(ctx)
	if err != nil {
		return nil, err
	}
	for range casAttempts {
		rec, rev, err := s.read(ctx, records, id)
		if err != nil {
			return nil, err
		}
		if !rec.Status.Terminal() && rec.Runner != s.runner {
			gone, err := s.gone(ctx, leases, rec.Runner)
			if err != nil {
				return nil, err
			}
			if gone {
				if err := s.fail(ctx, records, id, rec, rev); casLost(err) {
					continue // changed meanwhile: read it again
				} else if err != nil {
					return nil, err
				}
			}
		}
		if rec.Spilled {
			rctx, cancel := context.WithTimeout(parent, resultTimeout)
			b, err := results.GetBytes(rctx, id)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("cluster: task result %s: %w", id, err)
			}
			var sp spilled
			if err := json.Unmarshal(b, &sp); err != nil {
				return nil, fmt.Errorf("cluster: task result %s: %w", id, err)
			}
			rec.Result, rec.Error = sp.Result, sp.Error
		}
		return rec.task(id), nil
	}
	return nil, fmt.Errorf("cluster: task record %s: too many concurrent changes", id)
}

// gone reports whether runner's lease has lapsed.
func (s *TaskStore) gone(ctx context.Context, leases jetstream.KeyValue, runner string) (bool, error) {
	_, err := leases.Get(ctx, runner)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) || errors.Is(err, jetstream.ErrInvalidKey):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("cluster: task runner lease: %w", err)
	}
	return false, nil
}

// fail ends task id, whose runner is gone, with a message that says so:
// rec, read at revision rev, becomes the failed task. A concurrent change
// is casLost.
func (s *TaskStore) fail(ctx context.Context, records jetstream.KeyValue, id string, rec *taskRecord, rev uint64) error {
	e, _ := json.Marshal(map[string]any{"code": -32603, "message": errRunnerGone})
	rec.Status, rec.Message, rec.Error, rec.Pending, rec.Updated = tasks.Failed, errRunnerGone, e, nil, time.Now()
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("cluster: task record: %w", err)
	}
	if _, err := records.Update(ctx, taskKey(id), b, rev); err != nil {
		return fmt.Errorf("cluster: fail task %s: %w", id, err)
	}
	s.log.Warn("cluster: a task failed: the replica running it is gone", "task", id, "runner", rec.Runner)
	return nil
}

// Delete implements tasks.Store: the record and its result.
func (s *TaskStore) Delete(ctx context.Context, id string) error {
	if !taskID.MatchString(id) {
		return nil
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	records, _, results, err := s.bind(ctx)
	if err != nil {
		return err
	}
	if err := records.Purge(ctx, taskKey(id)); err != nil {
		return fmt.Errorf("cluster: delete task %s: %w", id, err)
	}
	if err := results.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("cluster: delete task result %s: %w", id, err)
	}
	return nil
}

// runnerMsg is a request to a task's runner, version taskVersion.
type runnerMsg struct {
	V         int                        `json:"v"`
	Op        string                     `json:"op"` // "cancel" or "update"
	Task      string                     `json:"task"`
	Owner     string                     `json:"owner"`
	Responses map[string]json.RawMessage `json:"responses,omitempty"`
}

// runnerReply is a runner's answer: Error "" is done; errNotFoundReply is
// tasks.ErrNotFound.
type runnerReply struct {
	V     int    `json:"v"`
	Error string `json:"error,omitempty"`
}

const errNotFoundReply = "not found"

// Cancel implements tasks.Remote.
func (s *TaskStore) Cancel(ctx context.Context, t *tasks.Task) error {
	return s.forward(ctx, t, runnerMsg{Op: "cancel"})
}

// Update implements tasks.Remote.
func (s *TaskStore) Update(ctx context.Context, t *tasks.Task, responses map[string]json.RawMessage) error {
	return s.forward(ctx, t, runnerMsg{Op: "update", Responses: responses})
}

// forward sends m about t to t's runner. A task this process runs and no
// longer holds has finished: there is nothing to forward. A runner that
// does not answer and whose lease has lapsed is gone: the task fails.
func (s *TaskStore) forward(ctx context.Context, t *tasks.Task, m runnerMsg) error {
	if t.Runner == s.runner || t.Runner == "" {
		return nil
	}
	m.V, m.Task, m.Owner = taskVersion, t.ID, t.Owner
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("cluster: task %s: %w", m.Op, err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	msg, err := s.c.nc.RequestWithContext(ctx, s.runnerSubject(t.Runner), b)
	if errors.Is(err, nats.ErrNoResponders) {
		// Nobody takes the runner's requests: the Get fails the task if
		// the runner's lease is gone too.
		cur, gerr := s.Get(ctx, t.ID)
		switch {
		case gerr != nil:
			return gerr
		case cur.Status.Terminal():
			return nil
		}
		return fmt.Errorf("cluster: task %s: the replica running it does not answer", m.Op)
	}
	if err != nil {
		return fmt.Errorf("cluster: task %s: %w", m.Op, err)
	}
	var r runnerReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return fmt.Errorf("cluster: task %s: reply: %w", m.Op, err)
	}
	switch r.Error {
	case "":
		return nil
	case errNotFoundReply:
		return tasks.ErrNotFound
	}
	return fmt.Errorf("cluster: task %s on its replica: %s", m.Op, r.Error)
}

func (s *TaskStore) runnerSubject(runner string) string { return s.prefix + ".tasks." + runner }

// Name implements the App's Part.
func (s *TaskStore) Name() string { return "cluster tasks" }

// Start implements the App's Part: it takes the cancels and answers for
// this process's tasks and keeps its lease (from now, or once NATS is
// reachable).
func (s *TaskStore) Start(context.Context) error {
	sub, err := s.c.nc.Subscribe(s.runnerSubject(s.runner), s.serve)
	if err != nil {
		return fmt.Errorf("cluster: subscribe task requests: %w", err)
	}
	s.sub = sub
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.done = stop, make(chan struct{})
	go s.keepLease(ctx)
	return nil
}

// serve answers one request of another replica about a task run here.
func (s *TaskStore) serve(msg *nats.Msg) {
	var m runnerMsg
	reply := runnerReply{V: taskVersion}
	err := json.Unmarshal(msg.Data, &m)
	switch {
	case err != nil || m.V != taskVersion:
		reply.Error = fmt.Sprintf("a request of version %d, this replica serves %d", m.V, taskVersion)
	case s.mgr == nil:
		reply.Error = "this replica runs no tasks"
	default:
		ctx, cancel := s.ctx(context.Background())
		if m.Op == "update" {
			err = s.mgr.Update(ctx, m.Owner, m.Task, m.Responses)
		} else {
			err = s.mgr.Cancel(ctx, m.Owner, m.Task)
		}
		cancel()
		switch {
		case errors.Is(err, tasks.ErrNotFound):
			reply.Error = errNotFoundReply
		case err != nil:
			reply.Error = err.Error()
		}
	}
	b, _ := json.Marshal(reply)
	_ = msg.Respond(b) // the forwarder gave up: nothing to do
}

// keepLease refreshes this process's lease every third of its life until
// ctx is done.
func (s *TaskStore) keepLease(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.opts.Lease / 3)
	defer tick.Stop()
	for {
		if err := s.renew(ctx); err != nil {
			s.log.Debug("cluster: task runner lease", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *TaskStore) renew(ctx context.Context) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	_, leases, _, err := s.bind(ctx)
	if err != nil {
		return err
	}
	_, err = leases.Put(ctx, s.runner, []byte(s.c.opts.Cluster.Replica))
	return err
}

// Stop implements the App's Part: it stops taking requests and ends the
// lease, so that what this process still ran fails at its next read.
func (s *TaskStore) Stop(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	s.stop()
	<-s.done
	if err := s.sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("cluster: unsubscribe task requests: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	if _, leases, _, err := s.bind(ctx); err == nil {
		if err := leases.Purge(ctx, s.runner); err != nil {
			return fmt.Errorf("cluster: end the task runner lease: %w", err)
		}
	}
	return nil
}

var (
	_ tasks.Store  = (*TaskStore)(nil)
	_ tasks.Remote = (*TaskStore)(nil)
)
