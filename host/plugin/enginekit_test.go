package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

// The engine conformance kit: one suite every Engine must pass, in the
// spirit of fstest.TestFS. It runs the package's ABI, capability and
// adversarial-fixture tests (every fixture in testdata/wat) plus the
// engine-specific checks below, on every engine compiled into the test
// binary: wazero always, wasmtime with -tags wasmtime. On the default
// engine (wazero) the package's tests in the list run as top-level tests
// of their own, so the kit runs only its own checks there.
//
//	go test -run TestEngineKit ./host/plugin/                 # wazero
//	go test -tags wasmtime -run TestEngineKit ./host/plugin/  # both
//
// A new engine registers itself with registerEngine and must pass the kit
// unchanged.

// kitEngine is the engine newEnv gives the runtimes it creates; "" is the
// default engine. TestEngineKit sets it while it runs; the package's tests
// do not run in parallel, so nothing else sees it.
var kitEngine string

// engineKit lists the kit's tests.
var engineKit = []struct {
	name string
	run  func(*testing.T)
	// pkg marks a test of the package that go test also runs on its own,
	// on the default engine.
	pkg bool
}{
	// The Engine interface itself.
	{"EngineInterface", kitEngineInterface, false},
	// ABI calls and the pool.
	{"GoodPlugin", TestGoodPlugin, true},
	{"RequestTooLarge", TestRequestTooLarge, true},
	{"LoadErrors", TestLoadErrors, true},
	{"AuthorLoadErrors", TestAuthorLoadErrors, true},
	{"EngineReported", kitEngineReported, false},
	{"Quarantine", TestQuarantine, true},
	{"Hammer", TestHammer, true},
	{"CloseWaitsAndRefuses", TestCloseWaitsAndRefuses, true},
	{"RecycleAfterMaxCalls", TestRecycleAfterMaxCalls, true},
	{"CompilationCacheDir", TestCompilationCacheDir, true},
	{"CorruptCompilationCache", TestCorruptCompilationCache, true},
	{"CompiledOncePerFile", kitCompiledOncePerFile, false},
	{"CompileRefusesBeforeCompiling", TestCompileRefusesBeforeCompiling, true},
	{"GuestsReportABIMinor", TestGuestsReportABIMinor, true},
	{"GoGuest", kitGoGuest, false},
	// Every capability.
	{"CapabilitiesDeniedUnlessGranted", TestCapabilitiesDeniedUnlessGranted, true},
	{"GrantedNames", TestGrantedNames, true},
	{"Files", TestFiles, true},
	{"KV", TestKV, true},
	{"KVSharedAcrossVersions", TestKVSharedAcrossVersions, true},
	{"ConfigLogNotify", TestConfigLogNotify, true},
	{"Floods", TestFloods, true},
	{"HTTP", TestHTTP, true},
	{"HTTPResponseHeadersCapped", TestHTTPResponseHeadersCapped, true},
	{"DeniedLabelsBounded", TestDeniedLabelsBounded, true},
	{"FilesSwapWindow", TestFilesSwapWindow, true},
	{"FilesAcrossRoots", TestFilesAcrossRoots, true},
	{"KVKeysAreBytes", TestKVKeysAreBytes, true},
	{"LoopbackIPv6FormsRefusedAtDial", TestLoopbackIPv6FormsRefusedAtDial, true},
	{"DeniedCallNamesGrant", TestDeniedCallNamesGrant, true},
	// The life cycle.
	{"LoadServesTheDescribedInstance", TestLoadServesTheDescribedInstance, true},
	{"ModuleRereadsItsFile", TestModuleRereadsItsFile, true},
	{"SleepAndWake", TestSleepAndWake, true},
	{"WakeOnce", TestWakeOnce, true},
	{"WakeOutlastsTheCallDeadline", TestWakeOutlastsTheCallDeadline, true},
	{"WakeRefusesAReplacedFile", TestWakeRefusesAReplacedFile, true},
	{"DeferredWhileAsleep", TestDeferredWhileAsleep, true},
	{"QuarantinedWhileAsleep", TestQuarantinedWhileAsleep, true},
	{"WarmMetadataCache", TestWarmMetadataCache, true},
	// Every adversarial fixture, and the limits.
	{"Contained", TestContained, true},
	{"InvalidOutputContained", TestInvalidOutputContained, true},
	{"ShapeNotCheckedHere", TestShapeNotCheckedHere, true},
	{"MemoryLimit", TestMemoryLimit, true},
	{"ResponseLimitRaised", TestResponseLimitRaised, true},
	{"CallerCancelIsNotAFailure", TestCallerCancelIsNotAFailure, true},
	{"CallBudgetStopsGuest", TestCallBudgetStopsGuest, true},
	{"DeadlineAfterSleep", TestDeadlineAfterSleep, true},
	{"SleepWakesAtDeadline", TestSleepWakesAtDeadline, true},
	{"TaskDeadline", TestTaskDeadline, true},
	{"ZeroLengthAnyPointer", TestZeroLengthAnyPointer, true},
	{"SetResultOutsideCall", TestSetResultOutsideCall, true},
	{"CancelWithoutDeadline", kitCancelWithoutDeadline, false},
	{"Fuel", kitFuel, false},
	{"PerPluginEngine", kitPerPluginEngine, false},
	{"EveryFixture", kitEveryFixture, false},
}

func TestEngineKit(t *testing.T) {
	engines := Engines()
	if len(engines) == 0 || !contains(engines, EngineWazero) {
		t.Fatalf("Engines() = %v, want wazero among them", engines)
	}
	for _, eng := range engines {
		t.Run(eng, func(t *testing.T) {
			kitEngine = eng
			defer func() { kitEngine = "" }()
			for _, k := range engineKit {
				if k.pkg && eng == DefaultEngine {
					continue // it ran already, as a test of its own
				}
				t.Run(k.name, k.run)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// engineProbe is this module (wat2wasm output, 174 bytes):
//
//	(module
//	  (import "corral_test" "twice" (func $twice (param i64 f64) (result i64)))
//	  (memory (export "memory") 1)
//	  (func (export "oob") (result i32) (i32.load (i32.const 0xfffffff0)))
//	  (func (export "div") (result i32) (i32.div_u (i32.const 1) (i32.const 0)))
//	  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
//	  (func (export "call") (param i64 f64) (result i64) (call $twice (local.get 0) (local.get 1)))
//	  (func (export "poke") (param i32 i32) (i32.store8 (local.get 0) (local.get 1))))
const engineProbe = "\x00asm\x01\x00\x00\x00\x01\x15\x04`\x02~|\x01~`\x00\x01\x7f`\x01\x7f\x01\x7f`\x02\x7f\x7f\x00\x02\x15\x01\vcorral_test\x05twice\x00\x00\x03\x06\x05\x01\x01\x02\x00\x03\x05\x03\x01\x00\x01\a+\x06\x06memory\x02\x00\x03oob\x00\x01\x03div\x00\x02\x04grow\x00\x03\x04call\x00\x04\x04poke\x00\x05\n+\x05\a\x00Ap(\x02\x00\v\a\x00A\x01A\x00n\v\x06\x00 \x00@\x00\v\b\x00 \x00 \x01\x10\x00\v\t\x00 \x00 \x01:\x00\x00\v\x00\x0f\x04name\x01\b\x01\x00\x05twice"

type kitCtxKey struct{}

// kitEngineInterface drives an Engine directly: signatures of exports,
// memories and imports; host functions with i64 and f64 values that see
// the call's context and the caller's memory; the memory limit; guest
// traps that leave the engine serving.
func kitEngineInterface(t *testing.T) {
	ctx := context.Background()
	f, err := factory(kitEngine)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f(backendConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	twiceSig := Signature{Params: []ValueType{I64, F64}, Results: []ValueType{I64}}
	var seen []any
	e, err := b.NewEngine(ctx, EngineConfig{MemoryLimitPages: 4, HostModule: "corral_test", HostFuncs: []HostFunc{{
		Name: "twice", Sig: twiceSig,
		Fn: func(ctx context.Context, mem Memory, stack []uint64) {
			seen = append(seen, ctx.Value(kitCtxKey{}))
			if !mem.Write(0, []byte{42}) {
				panic("host write failed")
			}
			stack[0] = uint64(2*int64(stack[0]) + int64(math.Float64frombits(stack[1])))
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	cm, err := e.Compile(ctx, "", func() ([]byte, error) { return []byte(engineProbe), nil })
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(ctx)
	i32 := []ValueType{I32}
	wantExports := map[string]Signature{
		"oob":  {Params: []ValueType{}, Results: i32},
		"div":  {Params: []ValueType{}, Results: i32},
		"grow": {Params: i32, Results: i32},
		"call": twiceSig,
		"poke": {Params: []ValueType{I32, I32}, Results: []ValueType{}},
	}
	if diff := cmp.Diff(wantExports, cm.Exports(), cmp.Comparer(Signature.Equal)); diff != "" {
		t.Errorf("exports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"memory"}, cm.Memories()); diff != "" {
		t.Errorf("memories (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Import{{Module: "corral_test", Name: "twice", Sig: twiceSig}}, cm.Imports(), cmp.Comparer(Signature.Equal)); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}

	for round := range 2 { // a trapped instance does not spoil the next
		in, err := cm.Instantiate(ctx, InstanceConfig{})
		if err != nil {
			t.Fatal(err)
		}
		cctx := context.WithValue(ctx, kitCtxKey{}, round)
		stack := make([]uint64, 2)
		stack[0], stack[1] = uint64(20), math.Float64bits(2.9)
		if err := in.Function("call").Call(cctx, stack); err != nil {
			t.Fatal(err)
		}
		if got := int64(stack[0]); got != 42 {
			t.Errorf("call(20, 2.9) = %d, want 42", got)
		}
		if b, ok := in.Memory().Read(0, 1); !ok || b[0] != 42 {
			t.Errorf("byte written by the host = %v, %v", b, ok)
		}
		stack[0], stack[1] = 100, 7
		if err := in.Function("poke").Call(cctx, stack); err != nil {
			t.Fatal(err)
		}
		if b, ok := in.Memory().Read(100, 1); !ok || b[0] != 7 {
			t.Errorf("byte written by the guest = %v, %v", b, ok)
		}
		if _, ok := in.Memory().Read(65535, 2); ok {
			t.Error("read past the end of memory")
		}
		for _, g := range []struct{ pages, want uint32 }{{3, 1}, {1, math.MaxUint32}} {
			stack[0] = uint64(g.pages)
			if err := in.Function("grow").Call(cctx, stack); err != nil {
				t.Fatal(err)
			}
			if got := uint32(stack[0]); got != g.want {
				t.Errorf("grow(%d) = %d, want %d (limit 4 pages)", g.pages, int32(got), int32(g.want))
			}
		}
		if got := in.Memory().Size(); got != 4*65536 {
			t.Errorf("memory size %d, want %d", got, 4*65536)
		}
		if in.Function("nope") != nil {
			t.Error("Function(nope) is not nil")
		}
		for name, want := range map[string]string{"oob": "out of bounds memory access", "div": "integer divide by zero"} {
			err := in.Function(name).Call(cctx, stack)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", name, err, want)
			}
		}
		if err := in.Close(ctx); err != nil {
			t.Error(err)
		}
	}
	if diff := cmp.Diff([]any{0, 1}, seen); diff != "" {
		t.Errorf("contexts seen by the host function (-want +got):\n%s", diff)
	}
}

// kitEngineReported: a runtime's plugins report the engine that runs
// them, and a malformed module does not compile.
func kitEngineReported(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "good", Config{})
	if got, want := p.Engine(), e.rt.DefaultEngine(); got != want {
		t.Errorf("Engine() = %q, want %q", got, want)
	}
	if kitEngine != "" && p.Engine() != kitEngine {
		t.Errorf("Engine() = %q, want the kit's %q", p.Engine(), kitEngine)
	}
	if _, err := e.rt.Compile(context.Background(), []byte("\x00asm\x01\x00\x00\x00\xff")); err == nil {
		t.Error("compiled a malformed module")
	}
}

// kitCompiledOncePerFile: loading one module with two memory limits gives
// two working plugins with their own limits.
func kitCompiledOncePerFile(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	ctx := context.Background()
	m, err := e.rt.Compile(ctx, fixture(t, "grow"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	for _, pages := range []uint32{20, 30} {
		p, err := e.rt.Load(ctx, m, Config{PoolSize: 1, Limits: Limits{MemoryPages: pages}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := invoke(p, ctx, abi.OpCallTool, []byte(`{}`))
		p.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(out), fmt.Sprintf(`{"pages":%d}`, pages); got != want {
			t.Errorf("pages %d: got %s, want %s", pages, got, want)
		}
	}
}

// kitGoGuest runs the Go conformance guest (a wasip1 reactor: WASI,
// _initialize, the Go runtime's memory growth) through the engine.
func kitGoGuest(t *testing.T) {
	path := filepath.Join("..", "..", "build", "plugins", "conformance.wasm")
	wasm, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is missing; run make plugins", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A shared cache directory keeps the second run of the suite cheap.
	e := newEnv(t, RuntimeConfig{CacheDir: filepath.Join(os.TempDir(), "corral-plugin-test-cache")})
	ctx := context.Background()
	m, err := e.rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	p, err := e.rt.Load(ctx, m, Config{Source: "conformance.wasm", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for range 50 {
		out, err := invoke(p, ctx, abi.OpReadResource, []byte(`{"uri":"test://static-text","principal":{"id":"kit"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `"uri":"test://static-text"`) {
			t.Fatalf("read = %s", out)
		}
	}
	_, err = invoke(p, ctx, abi.OpReadResource, []byte(`{"uri":"test://nope","principal":{"id":"kit"}}`))
	if !errors.As(err, new(*abi.Error)) {
		t.Errorf("unknown resource: %v, want *abi.Error", err)
	}
}

// kitEveryFixture compiles and loads every fixture in testdata/wat, those
// added after this kit included: each loads, or is refused by Compile
// (its decoded shape: the same check whatever the engine), or fails to
// load with a classified *Error, and a loaded one answers (or fails) one
// call of each operation without taking the runtime down.
func kitEveryFixture(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "wat", "*.wasm"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	e := newEnv(t, RuntimeConfig{})
	good := e.load(t, "good", Config{})
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".wasm")
		t.Run(name, func(t *testing.T) {
			m, err := e.rt.Compile(context.Background(), fixture(t, name))
			if err != nil {
				return // refused before compiling (TestCompileRefusesBeforeCompiling)
			}
			m.Close(context.Background())
			p, err := e.tryLoad(t, name, Config{PoolSize: 1, Limits: Limits{Timeout: 200 * time.Millisecond}})
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) || pe.Class != ClassInstantiate {
					t.Fatalf("load: %v, want a *Error of class %s", err, ClassInstantiate)
				}
				return
			}
			defer p.Close(context.Background())
			for _, op := range []abi.Op{abi.OpReadResource, abi.OpCallTool, abi.OpGetPrompt, abi.OpComplete} {
				_, err := invoke(p, context.Background(), op, []byte(`{"uri":"x://y","name":"echo","principal":{"id":"kit"}}`))
				var pe *Error
				if err != nil && !errors.As(err, new(*abi.Error)) && !errors.As(err, &pe) {
					t.Errorf("%s: unclassified error %v", op, err)
				}
			}
			readGood(t, good)
		})
	}
}

// kitCancelWithoutDeadline: a caller that cancels (with no deadline of its
// own) a runaway loop without host calls stops it soon, long before the
// plugin's timeout (wazero: the interrupt flag; wasmtime: the
// epoch watch), gets ClassCanceled, and the plugin is not blamed.
func kitCancelWithoutDeadline(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	// A deadline well past the bound below: the cancel, not the deadline,
	// must stop the loop.
	p := e.load(t, "loop", Config{PoolSize: 1, Limits: Limits{Timeout: 3 * stopBound, FailureThreshold: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := invoke(p, ctx, abi.OpReadResource, []byte(`{}`))
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(stopBound):
		t.Fatalf("a cancelled loop still ran %v after the cancel", stopBound)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
	if q, _ := p.Quarantined(); q {
		t.Error("quarantined after the caller gave up")
	}
}

// kitFuel: an engine either meters fuel (a runaway call traps "out of
// fuel" long before its timeout, an ordinary call succeeds) or refuses a
// fuel limit when the plugin loads.
func kitFuel(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	limits := Limits{Fuel: 50_000_000, Timeout: time.Minute}
	good, err := e.tryLoad(t, "good", Config{Limits: limits})
	if e.rt.DefaultEngine() != EngineWasmtime {
		if err == nil {
			good.Close(context.Background())
			t.Fatalf("%s loaded a plugin with a fuel limit", e.rt.DefaultEngine())
		}
		if !strings.Contains(err.Error(), "fuel") || !strings.Contains(err.Error(), "wasmtime") {
			t.Errorf("error %q does not explain fuel needs wasmtime", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close(context.Background())
	for range 3 { // fuel is per call, not per instance
		readGood(t, good)
	}
	loop := e.load(t, "loop", Config{PoolSize: 1, Limits: limits})
	_, err = invoke(loop, context.Background(), abi.OpReadResource, []byte(`{}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTrap || !strings.Contains(err.Error(), "out of fuel") {
		t.Fatalf("err = %v, want a trap out of fuel", err)
	}
}

// kitPerPluginEngine: a plugin's Config.Engine overrides the runtime's,
// and both engines serve side by side from one Module.
func kitPerPluginEngine(t *testing.T) {
	e := newEnv(t, RuntimeConfig{Engine: EngineWazero})
	ctx := context.Background()
	m, err := e.rt.Compile(ctx, fixture(t, "good"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	var got []string
	for _, eng := range []string{"", kitEngine} {
		p, err := e.rt.Load(ctx, m, Config{PoolSize: 1, Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		readGood(t, p)
		got = append(got, p.Engine())
		p.Close(ctx)
	}
	if diff := cmp.Diff([]string{EngineWazero, kitEngine}, got); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
	_, err = e.rt.Load(ctx, m, Config{PoolSize: 1, Engine: "v8"})
	if err == nil || !strings.Contains(err.Error(), `unknown engine "v8"`) {
		t.Errorf("engine v8: %v, want unknown engine", err)
	}
}

func TestCheckEngine(t *testing.T) {
	if err := CheckEngine(""); err != nil {
		t.Errorf("default engine: %v", err)
	}
	if err := CheckEngine(EngineWazero); err != nil {
		t.Errorf("wazero: %v", err)
	}
	err := CheckEngine(EngineWasmtime)
	if contains(Engines(), EngineWasmtime) {
		if err != nil {
			t.Errorf("wasmtime in %v: %v", Engines(), err)
		}
	} else if err == nil || !strings.Contains(err.Error(), "-tags wasmtime") {
		t.Errorf("wasmtime without the tag: %v, want a hint at -tags wasmtime", err)
	}
	if _, err := NewRuntime(context.Background(), RuntimeConfig{Engine: "v8"}); err == nil {
		t.Error("NewRuntime accepted engine v8")
	}
}
