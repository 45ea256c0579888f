//go:build wasmtime

package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/host/internal/atomicfile"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// wasmtimeVersion names the cache subdirectory: serialized modules only
// load into the wasmtime that wrote them (wasmtime checks this too).
const wasmtimeVersion = "v39.0.1"

// epochTick is the period of the epoch ticker, and so the resolution of
// the wall-clock deadline of a wasmtime call.
const epochTick = time.Millisecond

// noDeadlineTicks is the epoch deadline of a call whose context has no
// deadline (about 35 years of ticks).
const noDeadlineTicks = 1 << 40

func init() {
	registerEngine(EngineWasmtime, func(cfg backendConfig) (backend, error) { return newWasmtimeBackend(cfg.CacheDir) })
}

// wasmtimeBackend creates wasmtime engines. Memory limits are per store in
// wasmtime, so every engine of a backend shares one wasmtime.Engine (one
// per fuel setting, because fuel metering changes the generated code) and
// its compiled modules.
type wasmtimeBackend struct {
	cacheDir string

	mu      sync.Mutex
	flavors map[bool]*wtFlavor // by "fuel metered"
	closed  bool
}

func newWasmtimeBackend(cacheDir string) (*wasmtimeBackend, error) {
	if cacheDir != "" {
		if err := os.MkdirAll(cacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("plugin: cache dir: %w", err)
		}
		// The cache holds native code that will be executed: nobody else
		// may write there.
		if err := os.Chmod(cacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("plugin: cache dir: %w", err)
		}
	}
	return &wasmtimeBackend{cacheDir: cacheDir, flavors: make(map[bool]*wtFlavor)}, nil
}

func (b *wasmtimeBackend) flavor(fuel bool) (*wtFlavor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("plugin: wasmtime backend closed")
	}
	if f, ok := b.flavors[fuel]; ok {
		return f, nil
	}
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	cfg.SetParallelCompilation(true)
	cfg.SetConsumeFuel(fuel)
	f := &wtFlavor{
		engine:  wasmtime.NewEngineWithConfig(cfg),
		fuel:    fuel,
		modules: make(map[[32]byte]*wtShared),
	}
	if b.cacheDir != "" {
		name := fmt.Sprintf("wasmtime-%s-%s-%s", wasmtimeVersion, runtime.GOARCH, runtime.GOOS)
		if fuel {
			name += "-fuel"
		}
		f.cacheDir = filepath.Join(b.cacheDir, name)
		if err := os.MkdirAll(f.cacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("plugin: cache dir: %w", err)
		}
	}
	f.ticker = newEpochTicker(f.engine)
	b.flavors[fuel] = f
	return f, nil
}

func (b *wasmtimeBackend) NewEngine(ctx context.Context, cfg EngineConfig) (Engine, error) {
	f, err := b.flavor(cfg.Fuel > 0)
	if err != nil {
		return nil, err
	}
	linker := wasmtime.NewLinker(f.engine)
	if err := linker.DefineWasi(); err != nil {
		return nil, fmt.Errorf("plugin: wasi: %w", err)
	}
	// Guests write their stderr (Go's fatal errors land there) through
	// fd_write; this one hands it to the instance's writer, which WASI
	// itself can only do with files.
	linker.AllowShadowing(true)
	i32 := wasmtime.NewValType(wasmtime.KindI32)
	fdWriteType := wasmtime.NewFuncType([]*wasmtime.ValType{i32, i32, i32, i32}, []*wasmtime.ValType{i32})
	if err := linker.FuncNew("wasi_snapshot_preview1", "fd_write", fdWriteType, wtFdWrite); err != nil {
		return nil, fmt.Errorf("plugin: wasi fd_write: %w", err)
	}
	// And its sleep wakes at the call's deadline (engine_wasmtime_poll.go).
	if err := linker.FuncNew("wasi_snapshot_preview1", "poll_oneoff", fdWriteType, wtPollOneoff); err != nil {
		return nil, fmt.Errorf("plugin: wasi poll_oneoff: %w", err)
	}
	if cfg.HostModule != "" {
		for _, hf := range cfg.HostFuncs {
			ty := wasmtime.NewFuncType(toWtTypes(hf.Sig.Params), toWtTypes(hf.Sig.Results))
			if err := linker.FuncNew(cfg.HostModule, hf.Name, ty, wtHostFunc(hf)); err != nil {
				return nil, fmt.Errorf("plugin: host function %s: %w", hf.Name, err)
			}
		}
	}
	return &wasmtimeEngine{flavor: f, linker: linker, pages: cfg.MemoryLimitPages, fuel: cfg.Fuel}, nil
}

func (b *wasmtimeBackend) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, f := range b.flavors {
		f.ticker.stop()
	}
	b.flavors = nil
	return nil
}

// wtFlavor is one wasmtime.Engine with its epoch ticker and the modules it
// compiled.
type wtFlavor struct {
	engine   *wasmtime.Engine
	fuel     bool
	cacheDir string // "" keeps compiled code in memory only
	ticker   *epochTicker

	mu      sync.Mutex
	modules map[[32]byte]*wtShared
}

// wtShared is a compiled module shared by every engine (memory limit) of a
// flavor, closed when the last user closes it.
type wtShared struct {
	sum      [32]byte
	mod      *wasmtime.Module
	refs     int
	exports  map[string]Signature
	memories []string
	imports  []Import
}

// compile returns the module for wasm: shared in memory, else loaded from
// the cache directory, else compiled (and then written to the cache).
func (f *wtFlavor) compile(wasm []byte) (*wtShared, error) {
	sum := sha256.Sum256(wasm)
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.modules[sum]; ok {
		s.refs++
		return s, nil
	}
	var mod *wasmtime.Module
	path := ""
	if f.cacheDir != "" {
		path = filepath.Join(f.cacheDir, hex.EncodeToString(sum[:])+".cwasm")
		if _, err := os.Stat(path); err == nil {
			if m, err := wasmtime.NewModuleDeserializeFile(f.engine, path); err == nil {
				mod = m
			} else {
				_ = os.Remove(path) // stale or corrupt: compile again
			}
		}
	}
	if mod == nil {
		m, err := wasmtime.NewModule(f.engine, wasm)
		if err != nil {
			return nil, err
		}
		mod = m
		if path != "" {
			// A cache that cannot be written only costs a compile later.
			if b, err := mod.Serialize(); err == nil {
				_ = atomicfile.Write(path, b, 0o600)
			}
		}
	}
	s := &wtShared{sum: sum, mod: mod, refs: 1}
	s.describe()
	f.modules[sum] = s
	return s, nil
}

func (f *wtFlavor) release(s *wtShared) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(f.modules, s.sum)
		s.mod.Close()
	}
}

// describe records the module's exports and imports once.
func (s *wtShared) describe() {
	s.exports = make(map[string]Signature)
	for _, e := range s.mod.Exports() {
		ty := e.Type()
		if ft := ty.FuncType(); ft != nil {
			s.exports[e.Name()] = fromWtFuncType(ft)
		} else if ty.MemoryType() != nil {
			s.memories = append(s.memories, e.Name())
		}
	}
	for _, i := range s.mod.Imports() {
		ft := i.Type().FuncType()
		if ft == nil {
			continue
		}
		name := ""
		if n := i.Name(); n != nil {
			name = *n
		}
		s.imports = append(s.imports, Import{Module: i.Module(), Name: name, Sig: fromWtFuncType(ft)})
	}
}

// epochTicker advances an engine's epoch every epochTick while at least
// one call runs; a store's epoch deadline is relative to the epoch when it
// is set, so pausing while idle changes no deadline.
type epochTicker struct {
	engine *wasmtime.Engine
	active atomic.Int64
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{}
}

func newEpochTicker(e *wasmtime.Engine) *epochTicker {
	t := &epochTicker{engine: e, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go t.run()
	return t
}

func (t *epochTicker) enter() {
	if t.active.Add(1) == 1 {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

func (t *epochTicker) leave() { t.active.Add(-1) }

func (t *epochTicker) run() {
	defer close(t.exited)
	for {
		select {
		case <-t.wake:
		case <-t.done:
			return
		}
		tk := time.NewTicker(epochTick)
		for t.active.Load() > 0 {
			select {
			case <-tk.C:
				t.engine.IncrementEpoch()
			case <-t.done:
				tk.Stop()
				return
			}
		}
		tk.Stop()
	}
}

func (t *epochTicker) stop() {
	close(t.done)
	<-t.exited
}

// wasmtimeEngine is one memory limit (and fuel budget) over a flavor.
// Compilations, instantiations and calls hold mu for reading; Close takes
// it for writing, so it waits for them (a call ends by its deadline at the
// latest) and everything after it fails instead of touching freed state.
type wasmtimeEngine struct {
	flavor *wtFlavor
	linker *wasmtime.Linker
	pages  uint32
	fuel   uint64

	mu     sync.RWMutex
	closed bool
}

var errEngineClosed = errors.New("wasmtime: engine closed")

// use holds the engine open until done is called.
func (e *wasmtimeEngine) use() (done func(), err error) {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, errEngineClosed
	}
	return e.mu.RUnlock, nil
}

func (e *wasmtimeEngine) Compile(ctx context.Context, _ string, read func() ([]byte, error)) (CompiledModule, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wasm, err := read()
	if err != nil {
		return nil, err
	}
	done, err := e.use()
	if err != nil {
		return nil, err
	}
	defer done()
	s, err := e.flavor.compile(wasm)
	if err != nil {
		return nil, err
	}
	return &wasmtimeModule{e: e, s: s}, nil
}

func (e *wasmtimeEngine) Close(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		e.linker.Close()
	}
	return nil
}

type wasmtimeModule struct {
	e      *wasmtimeEngine
	s      *wtShared
	closed atomic.Bool
}

func (m *wasmtimeModule) Exports() map[string]Signature {
	out := make(map[string]Signature, len(m.s.exports))
	for k, v := range m.s.exports {
		out[k] = v
	}
	return out
}

func (m *wasmtimeModule) Memories() []string { return append([]string(nil), m.s.memories...) }

func (m *wasmtimeModule) Imports() []Import { return append([]Import(nil), m.s.imports...) }

func (m *wasmtimeModule) Instantiate(ctx context.Context, cfg InstanceConfig) (Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e := m.e
	done, err := e.use()
	if err != nil {
		return nil, err
	}
	defer done()
	in := &wtInstance{e: e, stderr: cfg.Stderr, ctx: ctx}
	if in.stderr == nil {
		in.stderr = io.Discard
	}
	store := wasmtime.NewStoreWithData(e.flavor.engine, in)
	// No args, no environment, no preopened directories; WASI's clocks and
	// entropy are the real ones.
	store.SetWasi(wasmtime.NewWasiConfig())
	store.Limiter(int64(e.pages)*65536, -1, -1, -1, -1)
	in.store = store
	in.watch = watchEpochs(store)

	t := e.flavor.ticker
	t.enter()
	defer t.leave()
	release, err := in.arm(ctx)
	if err != nil {
		in.closeStore()
		return nil, err
	}
	defer release()
	inst, err := e.linker.Instantiate(store, m.s.mod)
	if err != nil {
		in.closeStore()
		return nil, in.callError(ctx, err)
	}
	in.inst = inst
	for _, name := range cfg.StartFunctions {
		fn := inst.GetFunc(store, name)
		if fn == nil {
			continue
		}
		if _, err := fn.Call(store); err != nil {
			in.closeStore()
			return nil, fmt.Errorf("%s: %w", name, in.callError(ctx, err))
		}
	}
	if ex := inst.GetExport(store, "memory"); ex != nil {
		if mem := ex.Memory(); mem != nil {
			in.mem = &wtMemory{mem: mem, store: store}
		}
	}
	return in, nil
}

func (m *wasmtimeModule) Close(ctx context.Context) error {
	if m.closed.CompareAndSwap(false, true) {
		m.e.flavor.release(m.s)
	}
	return nil
}

// wtInstance is one store with one instance. It is the store's data, so
// host functions find the context of the running call through their
// caller.
type wtInstance struct {
	e      *wasmtimeEngine
	store  *wasmtime.Store
	watch  *epochWatch // nil: a call stops only at its deadline
	inst   *wasmtime.Instance
	mem    *wtMemory
	stderr io.Writer
	ctx    context.Context // of the running call

	mu  sync.Mutex
	fns map[string]*wtFunction
}

// arm sets the store's epoch deadline from the context's deadline, and
// its fuel; with a watch, the call also stops soon after the context is
// done. release ends the watch once the call returned.
func (in *wtInstance) arm(ctx context.Context) (release func() bool, err error) {
	ticks := uint64(noDeadlineTicks)
	if d, ok := ctx.Deadline(); ok {
		// The first tick may come at once, so one more than the quotient
		// never interrupts before the deadline.
		left := time.Until(d)
		if left < 0 {
			left = 0
		}
		ticks = uint64((left+epochTick-1)/epochTick) + 1
	}
	release = func() bool { return false }
	if in.watch != nil {
		ticks, release = in.watch.arm(ctx, ticks)
	}
	in.store.SetEpochDeadline(ticks)
	if in.e.fuel > 0 {
		if err := in.store.SetFuel(in.e.fuel); err != nil {
			release()
			return nil, fmt.Errorf("wasmtime: set fuel: %w", err)
		}
	}
	return release, nil
}

// closeStore closes the store and frees its epoch watch.
func (in *wtInstance) closeStore() {
	if in.store != nil {
		in.store.Close()
		in.store = nil
	}
	in.watch.free()
	in.watch = nil
}

// callError turns what wasmtime returned into an error that names the
// trap as wazero does ("stack overflow", "unreachable", ...). An interrupt
// is the context's deadline: it waits (a tick at most) until the context
// agrees, so callers can tell a timeout from a trap by the context.
func (in *wtInstance) callError(ctx context.Context, err error) error {
	var trap *wasmtime.Trap
	stopped := !errors.As(err, &trap) && strings.Contains(err.Error(), epochStopped)
	if !stopped && trap == nil {
		return fmt.Errorf("wasmtime: %s", trapSummary(err.Error()))
	}
	var code *wasmtime.TrapCode
	if trap != nil {
		if code = trap.Code(); code == nil { // a host function trapped: its message says why
			return fmt.Errorf("wasm error: %s", trapSummary(trap.Message()))
		}
	}
	if stopped || *code == wasmtime.Interrupt {
		if _, ok := ctx.Deadline(); ok {
			t := time.NewTimer(10 * epochTick)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wasmtime: interrupted: %w", ctx.Err())
		}
		return fmt.Errorf("wasmtime: interrupted: %s", trapSummary(err.Error()))
	}
	return fmt.Errorf("wasm error: %s (%s)", trapName(*code), trapSummary(trap.Message()))
}

// trapSummary keeps the reason of a wasmtime error message and drops its
// backtraces: "error while executing at wasm backtrace: ... Caused by:
// <reason> ... Stack backtrace: ...".
func trapSummary(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "Caused by:" {
			for _, r := range lines[i+1:] {
				if r = strings.TrimSpace(r); r != "" {
					return r
				}
			}
		}
	}
	return strings.TrimSpace(lines[0])
}

// wtOutOfFuel is WASMTIME_TRAP_CODE_OUT_OF_FUEL of the v39 C API.
// wasmtime-go's OutOfFuel constant predates a code inserted before it in
// the C enum (ALWAYS_TRAP_ADAPTER) and is one short; codes 0 to 10 agree.
const wtOutOfFuel wasmtime.TrapCode = 12

func trapName(c wasmtime.TrapCode) string {
	switch c {
	case wasmtime.StackOverflow:
		return "stack overflow"
	case wasmtime.MemoryOutOfBounds:
		return "out of bounds memory access"
	case wasmtime.HeapMisaligned:
		return "unaligned atomic"
	case wasmtime.TableOutOfBounds:
		return "table out of bounds"
	case wasmtime.IndirectCallToNull:
		return "indirect call to null"
	case wasmtime.BadSignature:
		return "indirect call type mismatch"
	case wasmtime.IntegerOverflow:
		return "integer overflow"
	case wasmtime.IntegerDivisionByZero:
		return "integer divide by zero"
	case wasmtime.BadConversionToInteger:
		return "invalid conversion to integer"
	case wasmtime.UnreachableCodeReached:
		return "unreachable"
	case wtOutOfFuel:
		return "out of fuel"
	}
	return "trap"
}

func (in *wtInstance) Function(name string) Function {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f, ok := in.fns[name]; ok {
		return f
	}
	fn := in.inst.GetFunc(in.store, name)
	if fn == nil {
		return nil
	}
	ty := fn.Type(in.store)
	f := &wtFunction{in: in, fn: fn}
	for _, p := range ty.Params() {
		f.params = append(f.params, p.Kind())
	}
	for _, r := range ty.Results() {
		f.results = append(f.results, r.Kind())
	}
	f.args = make([]any, len(f.params))
	if in.fns == nil {
		in.fns = make(map[string]*wtFunction)
	}
	in.fns[name] = f
	return f
}

func (in *wtInstance) Memory() Memory {
	if in.mem == nil {
		return nil
	}
	return in.mem
}

func (in *wtInstance) Close(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closeStore()
	return nil
}

type wtFunction struct {
	in      *wtInstance
	fn      *wasmtime.Func
	params  []wasmtime.ValKind
	results []wasmtime.ValKind
	args    []any // reused: an instance runs one call at a time
}

func (f *wtFunction) Call(ctx context.Context, stack []uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := f.in
	done, err := in.e.use()
	if err != nil {
		return err
	}
	defer done()
	if in.store == nil {
		return errors.New("wasmtime: instance closed")
	}
	for i, k := range f.params {
		f.args[i] = fromBits(k, stack[i])
	}
	t := in.e.flavor.ticker
	t.enter()
	defer t.leave()
	in.ctx = ctx
	release, err := in.arm(ctx)
	if err != nil {
		return err
	}
	res, err := f.fn.Call(in.store, f.args...)
	release()
	if err != nil {
		return in.callError(ctx, err)
	}
	switch len(f.results) {
	case 0:
	case 1:
		stack[0] = toBits(res)
	default:
		vals, ok := res.([]wasmtime.Val)
		if !ok || len(vals) != len(f.results) {
			return fmt.Errorf("wasmtime: %d results, want %d", len(vals), len(f.results))
		}
		for i, v := range vals {
			stack[i] = toBits(v.Get())
		}
	}
	return nil
}

// wtMemory is a linear memory seen through a store, or through the caller
// of a host function.
type wtMemory struct {
	mem   *wasmtime.Memory
	store wasmtime.Storelike
}

func (m *wtMemory) data() []byte { return m.mem.UnsafeData(m.store) }

func (m *wtMemory) Read(offset, n uint32) ([]byte, bool) {
	d := m.data()
	if uint64(offset)+uint64(n) > uint64(len(d)) {
		return nil, false
	}
	return d[offset : offset+n : offset+n], true
}

func (m *wtMemory) Write(offset uint32, b []byte) bool {
	d := m.data()
	if uint64(offset)+uint64(len(b)) > uint64(len(d)) {
		return false
	}
	copy(d[offset:], b)
	return true
}

func (m *wtMemory) Size() uint32 {
	n := m.mem.DataSize(m.store)
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

// callerMemory returns the memory of a host function's caller, or nil.
func callerMemory(c *wasmtime.Caller) *wtMemory {
	ex := c.GetExport("memory")
	if ex == nil {
		return nil
	}
	mem := ex.Memory()
	if mem == nil {
		return nil
	}
	return &wtMemory{mem: mem, store: c}
}

// wtHostFunc adapts a HostFunc to wasmtime: the stack in and out, the
// context of the running call, and a panic turned into a trap carrying
// its message.
func wtHostFunc(hf HostFunc) func(*wasmtime.Caller, []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	n := max(len(hf.Sig.Params), len(hf.Sig.Results))
	return func(c *wasmtime.Caller, args []wasmtime.Val) (res []wasmtime.Val, trap *wasmtime.Trap) {
		in, _ := c.Data().(*wtInstance)
		ctx := context.Background()
		if in != nil && in.ctx != nil {
			ctx = in.ctx
		}
		defer func() {
			if r := recover(); r != nil {
				res, trap = nil, wasmtime.NewTrap(fmt.Sprint(r))
			}
		}()
		stack := make([]uint64, n)
		for i, a := range args {
			stack[i] = toBits(a.Get())
		}
		var mem Memory
		if m := callerMemory(c); m != nil {
			mem = m
		} else {
			mem = noMemory{}
		}
		hf.Fn(ctx, mem, stack)
		res = make([]wasmtime.Val, len(hf.Sig.Results))
		for i, t := range hf.Sig.Results {
			res[i] = toVal(t, stack[i])
		}
		return res, nil
	}
}

// noMemory is the memory of a caller that exports none: every access is
// out of bounds.
type noMemory struct{}

func (noMemory) Read(uint32, uint32) ([]byte, bool) { return nil, false }
func (noMemory) Write(uint32, []byte) bool          { return false }
func (noMemory) Size() uint32                       { return 0 }

// WASI errnos used by wtFdWrite.
const (
	wasiSuccess = 0
	wasiBadf    = 8
	wasiFault   = 21
)

// wtFdWrite is wasi_snapshot_preview1.fd_write: stdout is discarded,
// stderr goes to the instance's writer, any other descriptor is bad (a
// guest opens no files).
func wtFdWrite(c *wasmtime.Caller, args []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	fd, iovs, count, nwritten := args[0].I32(), uint32(args[1].I32()), uint32(args[2].I32()), uint32(args[3].I32())
	ret := func(errno int32) ([]wasmtime.Val, *wasmtime.Trap) {
		return []wasmtime.Val{wasmtime.ValI32(errno)}, nil
	}
	if fd != 1 && fd != 2 {
		return ret(wasiBadf)
	}
	m := callerMemory(c)
	if m == nil {
		return ret(wasiFault)
	}
	var w io.Writer = io.Discard
	if in, ok := c.Data().(*wtInstance); ok && fd == 2 {
		w = in.stderr
	}
	d := m.data()
	if uint64(iovs)+8*uint64(count) > uint64(len(d)) {
		return ret(wasiFault)
	}
	var total uint32
	for i := uint32(0); i < count; i++ {
		ptr := binary.LittleEndian.Uint32(d[iovs+8*i:])
		n := binary.LittleEndian.Uint32(d[iovs+8*i+4:])
		if uint64(ptr)+uint64(n) > uint64(len(d)) {
			return ret(wasiFault)
		}
		_, _ = w.Write(d[ptr : ptr+n])
		total += n
	}
	if uint64(nwritten)+4 > uint64(len(d)) {
		return ret(wasiFault)
	}
	binary.LittleEndian.PutUint32(d[nwritten:], total)
	return ret(wasiSuccess)
}

func toWtTypes(ts []ValueType) []*wasmtime.ValType {
	out := make([]*wasmtime.ValType, len(ts))
	for i, t := range ts {
		out[i] = wasmtime.NewValType(toWtKind(t))
	}
	return out
}

func toWtKind(t ValueType) wasmtime.ValKind {
	switch t {
	case I64:
		return wasmtime.KindI64
	case F32:
		return wasmtime.KindF32
	case F64:
		return wasmtime.KindF64
	}
	return wasmtime.KindI32
}

func fromWtKind(k wasmtime.ValKind) ValueType {
	switch k {
	case wasmtime.KindI32:
		return I32
	case wasmtime.KindI64:
		return I64
	case wasmtime.KindF32:
		return F32
	case wasmtime.KindF64:
		return F64
	}
	return 0 // a reference or vector type: never equal to an ABI signature
}

func fromWtFuncType(ft *wasmtime.FuncType) Signature {
	var s Signature
	for _, p := range ft.Params() {
		s.Params = append(s.Params, fromWtKind(p.Kind()))
	}
	for _, r := range ft.Results() {
		s.Results = append(s.Results, fromWtKind(r.Kind()))
	}
	if s.Params == nil {
		s.Params = []ValueType{}
	}
	if s.Results == nil {
		s.Results = []ValueType{}
	}
	return s
}

// fromBits boxes a stack slot as the argument Func.Call wants for kind k.
func fromBits(k wasmtime.ValKind, v uint64) any {
	switch k {
	case wasmtime.KindI64:
		return int64(v)
	case wasmtime.KindF32:
		return math.Float32frombits(uint32(v))
	case wasmtime.KindF64:
		return math.Float64frombits(v)
	}
	return int32(uint32(v))
}

// toBits stores a result of Func.Call (or a Val's Get) in a stack slot.
func toBits(v any) uint64 {
	switch x := v.(type) {
	case int32:
		return uint64(uint32(x))
	case int64:
		return uint64(x)
	case float32:
		return uint64(math.Float32bits(x))
	case float64:
		return math.Float64bits(x)
	}
	return 0
}

func toVal(t ValueType, v uint64) wasmtime.Val {
	switch t {
	case I64:
		return wasmtime.ValI64(int64(v))
	case F32:
		return wasmtime.ValF32(math.Float32frombits(uint32(v)))
	case F64:
		return wasmtime.ValF64(math.Float64frombits(v))
	}
	return wasmtime.ValI32(int32(uint32(v)))
}
