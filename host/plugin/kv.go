package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/corral-mcp/corral/abi"
)

// Store is a plugin's key-value store. Implementations enforce their
// quota and are safe for concurrent use.
type Store interface {
	// Get returns the value of key, or ErrNotFound.
	Get(key string) ([]byte, error)
	// Set stores value under key, or returns ErrQuota when the store
	// would exceed its quota (ErrTooLarge when it cannot hold the value at
	// all).
	Set(key string, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key string) error
	// Close flushes and releases the store.
	Close() error
}

// Errors of a Store.
var (
	ErrNotFound = errors.New("not found")
	ErrQuota    = errors.New("quota exceeded")
	// ErrTooLarge: the store cannot hold a value this big whatever the
	// quota (a shared store's message size limit).
	ErrTooLarge = errors.New("value too large")
)

// MemoryStore is a Store in memory, optionally persisted to an
// append-only log (OpenFileStore).
type MemoryStore struct {
	mu    sync.Mutex
	quota int64
	used  int64
	data  map[string][]byte
	log   *kvLog // nil: memory only
}

// NewMemoryStore returns an empty in-memory store holding at most quota
// bytes of keys and values.
func NewMemoryStore(quota int64) *MemoryStore {
	return &MemoryStore{quota: quota, data: make(map[string][]byte)}
}

// OpenFileStore opens (or creates, 0600 in a 0700 directory) a store
// persisted as an append-only log at path (kvlog.go): a change appends one
// record and syncs it, so it costs in proportion to what it changes; the
// log is compacted when its dead records outweigh the live ones. A store
// left by an older corral as kv.json beside path is read once and
// replaced by the log.
func OpenFileStore(path string, quota int64) (*MemoryStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	s := NewMemoryStore(quota)
	l, err := openKVLog(path, s.data)
	if err != nil {
		return nil, err
	}
	s.log = l
	for k, v := range s.data {
		s.used += int64(len(k) + len(v))
	}
	return s, nil
}

// Get implements Store.
func (s *MemoryStore) Get(key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	if !ok {
		return nil, ErrNotFound
	}
	return append([]byte(nil), v...), nil
}

// Set implements Store.
func (s *MemoryStore) Set(key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	used := s.used + int64(len(key)+len(value))
	old, had := s.data[key]
	if had {
		used -= int64(len(key) + len(old))
	}
	if used > s.quota {
		return ErrQuota
	}
	value = append([]byte(nil), value...)
	if s.log != nil {
		if err := s.log.set(key, value, old, had); err != nil {
			return err
		}
	}
	s.data[key] = value
	s.used = used
	if s.log != nil {
		s.log.compact(s.data)
	}
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.data[key]
	if !ok {
		return nil
	}
	if s.log != nil {
		if err := s.log.delete(key, old); err != nil {
			return err
		}
	}
	delete(s.data, key)
	s.used -= int64(len(key) + len(old))
	if s.log != nil {
		s.log.compact(s.data)
	}
	return nil
}

// Close implements Store.
func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return nil
	}
	return s.log.close()
}

// sharedStore is a Store opened once per plugin name and shared by every
// loaded version of that plugin (an old one draining while a new one
// serves), so they never overwrite each other's file.
type sharedStore struct {
	Store
	name string
	refs int
}

func (r *Runtime) openStore(plugin string, quota int64) (*sharedStore, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.stores[plugin]; ok {
		s.refs++
		return s, nil
	}
	var (
		st  Store
		err error
	)
	switch {
	case r.cfg.OpenStore != nil:
		st, err = r.cfg.OpenStore(plugin, quota)
	case r.cfg.DataDir != "":
		st, err = OpenFileStore(filepath.Join(r.cfg.DataDir, plugin, kvLogName), quota)
	default:
		st = NewMemoryStore(quota)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", plugin, err)
	}
	s := &sharedStore{Store: st, name: plugin, refs: 1}
	r.stores[plugin] = s
	return s, nil
}

func (r *Runtime) releaseStore(s *sharedStore) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.refs--
	if s.refs > 0 {
		return nil
	}
	delete(r.stores, s.name)
	return s.Close()
}

func kvCaps(st *callState, stack []uint64) *capSet {
	c := st.caps
	if c == nil || c.kv == nil {
		st.denied(stack, abi.CapKV, denyNotGranted)
		return nil
	}
	return c
}

// kvKey checks the key (ptr, len) in stack[0:2] of a kv host function: a
// range outside guest memory traps, an ungranted capability is denied and
// an empty or oversized key is invalid (the errno is set; ok is false).
func kvKey(fn string, st *callState, mem Memory, stack []uint64) (c *capSet, key string, ok bool) {
	kp, kn := uint32(stack[0]), uint32(stack[1])
	checkRange(fn, mem, kp, kn)
	if c = kvCaps(st, stack); c == nil {
		return nil, "", false
	}
	if kn == 0 || kn > maxKeyBytes {
		setRet(stack, abi.ErrnoInvalid)
		return nil, "", false
	}
	return c, string(guestBytes(fn, mem, kp, kn)), true
}

func hostKVGet(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncKVGet
	st := mustState(ctx, fn)
	c, key, ok := kvKey(fn, st, mem, stack)
	if !ok {
		return
	}
	v, err := c.kv.Get(key)
	switch {
	case errors.Is(err, ErrNotFound):
		setRet(stack, abi.ErrnoNotFound)
	case err != nil:
		st.p.log.Warn("kv get failed", "err", err)
		setRet(stack, abi.ErrnoIO)
	default:
		st.setOutput(stack, v)
	}
}

func hostKVSet(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncKVSet
	st := mustState(ctx, fn)
	vp, vn := uint32(stack[2]), uint32(stack[3])
	checkRange(fn, mem, vp, vn)
	c, key, ok := kvKey(fn, st, mem, stack)
	if !ok {
		return
	}
	if int(vn) > c.kvMax {
		setRet(stack, abi.ErrnoTooLarge)
		return
	}
	val := guestBytes(fn, mem, vp, vn)
	if val == nil {
		val = []byte{}
	}
	err := c.kv.Set(key, val)
	switch {
	case errors.Is(err, ErrQuota):
		setRet(stack, abi.ErrnoQuota)
	case errors.Is(err, ErrTooLarge):
		setRet(stack, abi.ErrnoTooLarge)
	case err != nil:
		st.p.log.Warn("kv set failed", "err", err)
		setRet(stack, abi.ErrnoIO)
	default:
		setRet(stack, 0)
	}
}

func hostKVDelete(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncKVDelete
	st := mustState(ctx, fn)
	c, key, ok := kvKey(fn, st, mem, stack)
	if !ok {
		return
	}
	if err := c.kv.Delete(key); err != nil {
		st.p.log.Warn("kv delete failed", "err", err)
		setRet(stack, abi.ErrnoIO)
		return
	}
	setRet(stack, 0)
}
