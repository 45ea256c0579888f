package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// Module is a plugin file, known by its digest. It holds no compiled code
// of its own: the code of every (engine, limits) a plugin of it runs
// under is the runtime's, shared by every module of the same digest and
// released when the last plugin using it closes or sleeps. A module made
// from a file (CompileFile) keeps no copy of its bytes either: when code
// must be compiled again (new limits, a wake-up), it reads the file again
// and refuses bytes whose digest is not the module's.
type Module struct {
	rt     *Runtime
	digest string
	read   func() ([]byte, error) // the module's bytes again, digest unchecked

	mu       sync.Mutex
	manifest *abi.Manifest // once described
	minor    uint32        // the guest's ABI minor, once described
	raw      []byte        // describe's answer, until Open stores it in the metadata cache
	// pin holds the code compiled by CompileFor until the first Load or
	// Close, so that the Load right after it compiles nothing.
	pin    *engineKey
	spare  *instance // the described instance, for the first Load under spareKey
	spareK engineKey
	expiry *time.Timer // drops spare and pin (expireHeld)
	closed bool
}

// codeKey names one compiled module of a Runtime.
type codeKey struct {
	engine engineKey
	digest string
}

// compiled is a runtime's compiled code for one codeKey, shared by
// reference count. ready is closed once cm (or err) is set.
type compiled struct {
	ready chan struct{}
	cm    CompiledModule
	err   error
	refs  int
}

// Compile decodes a plugin file, checks it against the compile limits and
// the ABI's exports and imports, then compiles it for the runtime's engine
// and the default limits, using and filling the compilation cache. A file
// refused by the checks costs a decode, never a compile. The module keeps
// wasm to compile it again; CompileFile keeps nothing.
func (r *Runtime) Compile(ctx context.Context, wasm []byte) (*Module, error) {
	return r.CompileFor(ctx, wasm, Config{})
}

// CompileFor is Compile for the engine and memory limit of cfg, those of
// the Load that follows: a module whose memory starts above the default
// limit compiles under a configuration that allows it, and is compiled
// once. The module keeps wasm.
func (r *Runtime) CompileFor(ctx context.Context, wasm []byte, cfg Config) (*Module, error) {
	return r.compileModule(ctx, wasm, "", cfg, func() ([]byte, error) { return wasm, nil })
}

// CompileFile is CompileFor for the plugin file at path whose content is
// data. The module does not keep data: it reads path again when it must
// compile once more, and refuses what it reads unless its digest is that
// of data.
func (r *Runtime) CompileFile(ctx context.Context, path string, data []byte, cfg Config) (*Module, error) {
	return r.compileModule(ctx, data, "", cfg, func() ([]byte, error) { return os.ReadFile(path) })
}

// compileModule compiles wasm, whose sha256 is digest ("": hashed here).
func (r *Runtime) compileModule(ctx context.Context, wasm []byte, digest string, cfg Config, read func() ([]byte, error)) (*Module, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := precheck(wasm, r.cfg.Compile, r.funcs); err != nil {
		return nil, err
	}
	if digest == "" {
		sum := sha256.Sum256(wasm)
		digest = hex.EncodeToString(sum[:])
	}
	m := &Module{rt: r, digest: digest, read: read}
	k := r.keyFor(cfg)
	if _, err := r.acquireCode(ctx, k, m.digest, func() ([]byte, error) { return wasm, nil }); err != nil {
		return nil, err
	}
	m.pin = &k
	return m, nil
}

// Digest is the sha256 (hex) of the module's bytes.
func (m *Module) Digest() string { return m.digest }

// Manifest returns the manifest the module described (Describe, or the
// first Load), nil before. Callers must not modify it.
func (m *Module) Manifest() *abi.Manifest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.manifest
}

// bytes reads the module's bytes again and checks their digest.
func (m *Module) bytes() ([]byte, error) {
	wasm, err := m.read()
	if err != nil {
		return nil, fmt.Errorf("%w: read the module again: %w", ErrHost, err)
	}
	sum := sha256.Sum256(wasm)
	if got := hex.EncodeToString(sum[:]); got != m.digest {
		return nil, fmt.Errorf("the plugin file changed since it was loaded (sha256 %s, loaded %s): its new content serves once it is reloaded", got[:12], m.digest[:12])
	}
	return wasm, nil
}

// code returns the module's compiled code for k, compiling it (through
// the compilation cache) when no plugin holds it; release it with
// releaseCode.
func (m *Module) code(ctx context.Context, k engineKey) (CompiledModule, error) {
	return m.rt.acquireCode(ctx, k, m.digest, m.bytes)
}

// acquireCode returns the compiled code of digest for k, taking a
// reference. One compile runs per key at a time: a caller arriving while
// it runs waits for it.
func (r *Runtime) acquireCode(ctx context.Context, k engineKey, digest string, read func() ([]byte, error)) (CompiledModule, error) {
	ck := codeKey{k, digest}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errors.New("plugin: runtime closed")
	}
	if c := r.code[ck]; c != nil {
		c.refs++
		r.mu.Unlock()
		<-c.ready
		if c.err != nil {
			return nil, c.err
		}
		return c.cm, nil
	}
	c := &compiled{ready: make(chan struct{}), refs: 1}
	r.code[ck] = c
	r.mu.Unlock()

	cm, err := r.compileCode(ctx, k, digest, read)
	r.mu.Lock()
	c.cm, c.err = cm, err
	if err != nil && r.code[ck] == c {
		delete(r.code, ck)
	}
	r.mu.Unlock()
	close(c.ready)
	return cm, err
}

func (r *Runtime) compileCode(ctx context.Context, k engineKey, digest string, read func() ([]byte, error)) (CompiledModule, error) {
	e, err := r.engine(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHost, err)
	}
	r.compiles.Add(1)
	cm, err := e.Compile(ctx, digest, read)
	if err != nil {
		// Callers name the step: the registry's log says "compile:" once.
		return nil, firstLine(err)
	}
	return cm, nil
}

// releaseCode drops a reference taken by acquireCode; the last one closes
// the code.
func (r *Runtime) releaseCode(k engineKey, digest string) {
	ck := codeKey{k, digest}
	r.mu.Lock()
	c := r.code[ck]
	if c == nil || c.err != nil {
		r.mu.Unlock()
		return
	}
	c.refs--
	if c.refs > 0 {
		r.mu.Unlock()
		return
	}
	delete(r.code, ck)
	r.mu.Unlock()
	_ = c.cm.Close(context.Background())
	r.rel.note()
}

// Compiles returns how many times the runtime's engines compiled a module
// (from the compilation cache or not) since it was created.
func (r *Runtime) Compiles() int64 { return r.compiles.Load() }

// pinned reports whether the module still holds the code CompileFor
// compiled.
func (m *Module) pinned() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pin != nil
}

// unpin drops the code CompileFor pinned.
func (m *Module) unpin() {
	m.mu.Lock()
	k := m.pin
	m.pin = nil
	m.mu.Unlock()
	if k != nil {
		m.rt.releaseCode(*k, m.digest)
	}
}

// takeSpare returns the described instance when it runs under k, with
// the reference to its code; nil otherwise.
func (m *Module) takeSpare(k engineKey) *instance {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.spare == nil || m.spareK != k {
		return nil
	}
	in := m.spare
	m.spare = nil
	return in
}

// dropSpare closes the described instance nobody took.
func (m *Module) dropSpare(ctx context.Context) {
	m.mu.Lock()
	in, k := m.spare, m.spareK
	m.spare = nil
	m.mu.Unlock()
	if in != nil {
		in.close(ctx)
		m.rt.releaseCode(k, m.digest)
	}
}

// expireHeld drops the described instance and the pinned code once d
// has passed, if no Load took them: a module described but not loaded in
// that time (a start of many files, which binds them once all are
// described; a file refused until another goes) then holds its manifest
// only, as a sleeping plugin does, and a later Load starts it asleep.
func (m *Module) expireHeld(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.expiry != nil {
		return
	}
	m.expiry = time.AfterFunc(d, func() {
		m.dropSpare(context.Background())
		m.unpin()
	})
}

// Close releases what the module holds: the code CompileFor pinned and
// the described instance no Load took. Plugins loaded from it hold their
// own references and may outlive it.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	if m.expiry != nil {
		m.expiry.Stop()
	}
	m.mu.Unlock()
	m.dropSpare(ctx)
	m.unpin()
	return nil
}

// Describe instantiates the module once under cfg's engine and limits,
// runs its initialization and describe with no capabilities, and returns
// the validated manifest. The instance is kept for the first Load under
// the same engine and memory limit, so that a plugin file is instantiated
// once both to be described and to serve.
func (r *Runtime) Describe(ctx context.Context, m *Module, cfg Config) (*abi.Manifest, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if man := m.Manifest(); man != nil {
		return man, nil
	}
	p := r.newPlugin(m, cfg)
	in, err := p.describe(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.spare != nil {
		in.close(ctx)
		r.releaseCode(p.key, m.digest)
		return m.manifest, nil
	}
	m.spare, m.spareK = in, p.key
	return m.manifest, nil
}

// keyFor names the compilation that runs a plugin configured as cfg
// (after withDefaults).
func (r *Runtime) keyFor(cfg Config) engineKey {
	engine := cfg.Engine
	if engine == "" {
		engine = r.engineName
	}
	return engineKey{name: engine, pages: cfg.Limits.MemoryPages, fuel: cfg.Limits.Fuel}
}
