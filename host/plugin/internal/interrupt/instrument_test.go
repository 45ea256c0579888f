package interrupt

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// wat compiles WebAssembly text with wabt's wat2wasm (every 2.0 feature
// is on by default in wabt 1.0.32).
func wat(t testing.TB, src string, flags ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm is not installed (bash testdata/build.sh installs wabt)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("wat2wasm", append([]string{in, "-o", out}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// instantiate compiles and instantiates wasm with the compiler engine and
// no imports, and returns the module and its flag.
func instantiate(t testing.TB, r wazero.Runtime, wasm []byte) (api.Module, api.MutableGlobal) {
	t.Helper()
	ctx := context.Background()
	mod, err := r.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.Close(ctx) })
	g, ok := mod.ExportedGlobal(FlagExport).(api.MutableGlobal)
	if !ok {
		t.Fatalf("no mutable global %q", FlagExport)
	}
	return mod, g
}

func newRuntime(t testing.TB) wazero.Runtime {
	t.Helper()
	r := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// TestInstrument: table tests on small modules, each rewritten, compiled
// by wazero and called with the flag down (the same results as the
// original) and, for those that loop, with the flag up (a trap).
func TestInstrument(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		fn    string
		args  []uint64
		want  []uint64
		loops int
		start bool
		// traps: with the flag up, calling fn traps.
		traps bool
	}{
		{
			name: "no globals, no loops",
			src:  `(module (func (export "f") (param i32) (result i32) (i32.add (local.get 0) (i32.const 1))))`,
			fn:   "f", args: []uint64{41}, want: []uint64{42}, traps: true, // the entry check
		},
		{
			name: "counting loop with br_if",
			src: `(module (func (export "f") (param $n i32) (result i32) (local $i i32)
				(loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
				  (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
				(local.get $i)))`,
			fn: "f", args: []uint64{1000}, want: []uint64{1000}, loops: 1, traps: true,
		},
		{
			name: "globals before and after, imported global",
			src: `(module
				(import "env" "g" (global $imp i32))
				(global $a (mut i32) (global.get $imp))
				(global $b (mut i64) (i64.const 7))
				(export "b" (global $b))
				(func (export "f") (result i32)
				  (global.set $a (i32.add (global.get $a) (i32.const 1)))
				  (global.get $a)))`,
			fn: "f", want: []uint64{5},
		},
		{
			name: "nested loops, multi-value block types, br_table",
			src: `(module
				(type $t (func (param i32) (result i32 i32)))
				(func (export "f") (param $n i32) (result i32) (local $s i32)
				  (block $out
				    (loop $outer
				      (br_if $out (i32.eqz (local.get $n)))
				      (local.get $n)
				      (loop $inner (type $t) (param i32) (result i32 i32)
				        (i32.const 1))
				      (local.set $s (i32.add (local.get $s) (i32.add)))
				      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
				      (block $a (block $b (br_table $a $b $outer (i32.const 2))))))
				  (local.get $s)))`,
			fn: "f", args: []uint64{3}, want: []uint64{3 + 2 + 1 + 3}, loops: 2, traps: true,
		},
		{
			name: "SIMD, bulk memory, reference types, saturating truncation",
			src: `(module
				(memory 1)
				(table $tab 2 funcref)
				(elem declare func $g)
				(data $d "abcdefghijklmnop")
				(func $g (result i32) (i32.const 9))
				(func (export "f") (result i32) (local $v v128)
				  (memory.init $d (i32.const 0) (i32.const 0) (i32.const 16))
				  (memory.copy (i32.const 16) (i32.const 0) (i32.const 16))
				  (memory.fill (i32.const 32) (i32.const 1) (i32.const 4))
				  (local.set $v (v128.load offset=16 align=1 (i32.const 0)))
				  (local.set $v (i8x16.shuffle 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0 (local.get $v) (local.get $v)))
				  (local.set $v (v128.load8_lane 3 (i32.const 32) (local.get $v)))
				  (table.set $tab (i32.const 1) (ref.func $g))
				  (drop (table.grow $tab (ref.null func) (i32.const 1)))
				  (drop (ref.is_null (table.get $tab (i32.const 0))))
				  (i32.add
				    (i32.add (i8x16.extract_lane_u 3 (local.get $v)) (i32.trunc_sat_f32_s (f32.const 1e10)))
				    (i32.add (call_indirect (result i32) (i32.const 1)) (i32.extend8_s (i32.const 0x80))))
				  (select (result i32) (i32.const 0) (i32.const 1) (i32.const 1))
				  (i32.add)
				  (drop (v128.const i64x2 -1 0x7fffffffffffffff))
				  (i64.const -0x8000000000000000) (drop)
				  (f64.const -0.5) (drop)))`,
			fn: "f", want: []uint64{uint64(uint32(1 + 0x7fffffff + 9 - 128))},
		},
		{
			name: "declared start function referenced",
			src: `(module (global $g (mut i32) (i32.const 0))
				(func $init (global.set $g (i32.const 5)))
				(start $init) (elem declare func $init)
				(func (export "f") (result i32) (drop (ref.func $init)) (global.get $g)))`,
			fn: "f", want: []uint64{5}, start: true,
		},
		{
			name: "start function becomes an export",
			src: `(module (global $g (mut i32) (i32.const 0))
				(func $init (global.set $g (i32.const 33)))
				(start $init)
				(func (export "f") (result i32) (global.get $g)))`,
			fn: "f", want: []uint64{33}, start: true, traps: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			orig := wat(t, tt.src)
			out, info, err := Instrument(orig)
			if err != nil {
				t.Fatal(err)
			}
			if info.Loops != tt.loops || info.Start != tt.start {
				t.Errorf("info = %+v, want %d loops, start %v", info, tt.loops, tt.start)
			}
			r := newRuntime(t)
			env := wat(t, `(module (global (export "g") i32 (i32.const 4)))`)
			if _, err := r.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
				t.Fatal(err)
			}
			mod, flag := instantiate(t, r, out)
			if tt.start {
				if _, err := mod.ExportedFunction(StartExport).Call(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got, err := mod.ExportedFunction(tt.fn).Call(ctx, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s(%v) (-want +got):\n%s", tt.fn, tt.args, diff)
			}
			flag.Set(1)
			_, err = mod.ExportedFunction(tt.fn).Call(ctx, tt.args...)
			if tt.traps && (err == nil || !strings.Contains(err.Error(), "unreachable")) {
				t.Errorf("with the flag up: %v, want an unreachable trap", err)
			}
		})
	}
}

// TestRefused: what the rewrite must not let through.
func TestRefused(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		flags []string
		want  string
	}{
		{"reserved flag name", `(module (func (export "corral:interrupt")))`, nil, `"corral:interrupt" is reserved`},
		{"reserved start name", `(module (func (export "corral:start")))`, nil, `"corral:start" is reserved`},
		// Invalid modules (wat2wasm --no-check) naming index 1 with one
		// global: after the rewrite, index 1 would be the flag.
		{"global.get of the flag's index", `(module (global (mut i32) (i32.const 0))
			(func (result i32) (global.get 1)))`, noCheck,
			"function 0: offset 0x1: global index 1 out of range (1 globals)"},
		{"global.set of the flag's index", `(module (global (mut i32) (i32.const 0))
			(func (loop (global.set 1 (i32.const 1)))))`, noCheck, "global index 1 out of range"},
		{"export of the flag's index", `(module (global (mut i32) (i32.const 0)) (export "x" (global 1)))`, noCheck,
			"export 0: global index 1 out of range"},
		{"global init reading the flag's index", `(module (global (mut i32) (global.get 1)))`, noCheck,
			"global section: global 0: constant expression at offset 0x3: global index 1 out of range"},
		{"data offset reading the flag's index", `(module (memory 1) (data (offset (global.get 0)) "x"))`, noCheck,
			"data section: segment 0: constant expression at offset 0x2: global index 0 out of range (0 globals)"},
		{"element offset reading the flag's index", `(module (table 1 funcref) (func $f) (elem (offset (global.get 0)) $f))`, noCheck,
			"element section: segment 0: constant expression"},
		{"element expression reading the flag's index", `(module (table 1 funcref) (elem (table 0) (i32.const 0) funcref (item (global.get 0))))`, noCheck,
			"element section: segment 0: constant expression"},
		{"atomics", `(module (memory 1 1 shared) (func (drop (i32.atomic.load (i32.const 0)))))`, []string{"--enable-threads"},
			"function 0: offset 0x3: unsupported opcode 0xfe"},
		{"atomics in code", `(module (import "e" "m" (memory 1)) (func (atomic.fence)))`, []string{"--enable-threads", "--no-check"},
			"function 0: offset 0x1: unsupported opcode 0xfe"},
		{"tail call", `(module (func $f (return_call $f)))`, []string{"--enable-tail-call"}, "function 0: offset 0x1: unsupported opcode 0x12"},
		{"relaxed SIMD", `(module (func (result v128) (i8x16.relaxed_swizzle (v128.const i64x2 0 0) (v128.const i64x2 0 0))))`,
			[]string{"--enable-relaxed-simd"}, "unsupported opcode 0xfd 0x100"},
		{"exceptions", `(module (tag $e) (func (throw $e)))`, []string{"--enable-exceptions"}, "unsupported section id 13"},
		{"multi-memory", `(module (memory 1) (memory $b 1) (func (drop (i32.load $b (i32.const 0)))))`, []string{"--enable-multi-memory"},
			"unsupported memarg alignment"},
		// Invalid modules using memory without one: the 0-page memory the
		// rewrite adds for its yields must not make them valid.
		{"load without memory", `(module (func (drop (i32.load (i32.const 0)))))`, noCheck, "memory instruction in a module without memory"},
		{"memory.grow without memory", `(module (func (drop (memory.grow (i32.const 1)))))`, noCheck, "memory instruction in a module without memory"},
		{"memory.fill without memory", `(module (func (memory.fill (i32.const 0) (i32.const 0) (i32.const 0))))`, noCheck, "memory instruction in a module without memory"},
		{"v128.load without memory", `(module (func (drop (v128.load (i32.const 0)))))`, noCheck, "memory instruction in a module without memory"},
		{"data without memory", `(module (data (i32.const 0) "x"))`, noCheck, "active data segment in a module without memory"},
		{"memory export without memory", `(module (export "m" (memory 0)))`, noCheck, "memory export in a module without memory"},
		// Invalid: ref.func in code must name a declared function; the
		// rewrite's export of the start function would declare it.
		{"ref.func of an undeclared start function", `(module (func $s) (start $s) (func (drop (ref.func $s))))`, noCheck,
			"ref.func 0: the start function is not declared"},
		{"start function with a parameter", `(module (func $s (param i32)) (start $s))`, noCheck,
			"start section: function 0 is not of type [] -> []"},
		{"start function out of range", `(module (start 3))`, noCheck, "start section: function index 3 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Instrument(wat(t, tt.src, tt.flags...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	for _, in := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), append(append([]byte(nil), header...), 0x01, 0x05, 0x00)} {
		if _, _, err := Instrument(in); err == nil {
			t.Errorf("Instrument(%q) succeeded", in)
		}
	}
}

// noCheck makes wat2wasm write modules that do not validate.
var noCheck = []string{"--no-check"}

// TestOtherSectionsUntouched: every section but global, export, start and
// code is copied byte for byte, custom sections in place.
func TestOtherSectionsUntouched(t *testing.T) {
	orig := wat(t, `(module
		(type (func (param i32)))
		(import "env" "f" (func (type 0)))
		(memory 1)
		(global i32 (i32.const 1))
		(export "m" (memory 0))
		(func (loop (br 0)))
		(data (i32.const 0) "xyz"))`)
	orig = append(orig, 0x00, 0x05, 0x04, 'n', 'o', 't', 'e') // a custom section at the end
	out, _, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	a, b := &module{}, &module{}
	if err := a.split(orig); err != nil {
		t.Fatal(err)
	}
	if err := b.split(out); err != nil {
		t.Fatal(err)
	}
	if len(a.sections) != len(b.sections) {
		t.Fatalf("%d sections, want %d", len(b.sections), len(a.sections))
	}
	for i := range a.sections {
		sa, sb := a.sections[i], b.sections[i]
		if sa.id != sb.id {
			t.Fatalf("section %d: id %d, want %d", i, sb.id, sa.id)
		}
		changed := !bytes.Equal(sa.body, sb.body)
		if want := sa.id == secGlobal || sa.id == secExport || sa.id == secCode; changed != want {
			t.Errorf("section id %d: changed %v, want %v", sa.id, changed, want)
		}
	}
}

// TestFlagStopsLoops: with the flag raised from another goroutine while
// the guest runs, each kind of endless loop traps promptly: the compiled
// code re-reads the flag on every iteration rather than once.
func TestFlagStopsLoops(t *testing.T) {
	tests := []struct{ name, body string }{
		{"br", `(loop $l (br $l))`},
		{"br_if", `(loop $l (br_if $l (i32.const 1)))`},
		{"br_table", `(loop $l (br_table $l $l (i32.const 0)))`},
		{"counting", `(local $i i32) (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (local.get $i)))`},
		{"nested", `(loop $a (loop $b (br $b)))`},
		{"mutual recursion without loops", `(call $g)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `(module (func (export "spin") ` + tt.body + `)
				(func $g (call $h) (call $h)) (func $h (call $g) (call $g)))`
			out, _, err := Instrument(wat(t, src))
			if err != nil {
				t.Fatal(err)
			}
			mod, flag := instantiate(t, newRuntime(t), out)
			timer := time.AfterFunc(20*time.Millisecond, func() { flag.Set(1) })
			defer timer.Stop()
			done := make(chan error, 1)
			go func() { _, err := mod.ExportedFunction("spin").Call(context.Background()); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "unreachable") {
					t.Fatalf("spin returned %v, want an unreachable trap", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("spin is still running 30 s after the flag went up")
			}
		})
	}
}

// TestGCWhileSpinning: a garbage collection that starts while a guest
// spins completes long before the guest is stopped: the yields let the
// Go runtime stop the world (without them it would wait for the call, and
// the goroutine raising the flag would wait for the collection).
func TestGCWhileSpinning(t *testing.T) {
	for _, src := range []string{
		`(module (func (export "spin") (loop (br 0))))`, // no memory: the rewrite adds one
		`(module (memory 1) (func (export "spin") (loop (br 0))))`,
		`(module (func $f (call $f) (call $f)) (func (export "spin") (call $f)))`,
	} {
		out, _, err := Instrument(wat(t, src))
		if err != nil {
			t.Fatal(err)
		}
		mod, flag := instantiate(t, newRuntime(t), out)
		start := time.Now()
		go func() {
			time.Sleep(10 * time.Millisecond)
			runtime.GC()
			flag.Set(1) // only once the collection is over
		}()
		_, err = mod.ExportedFunction("spin").Call(context.Background())
		if err == nil {
			t.Fatalf("%s: spin returned", src)
		}
		// Without the yields the collection (and so the call) would last
		// as long as the guest runs: forever.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: the call stopped after %v", src, d)
		}
	}
}

// TestRoundTrip rewrites every committed module (the adversarial WAT
// fixtures, the echo guest's build if present, and build/plugins after
// make plugins): each still compiles and has the same exports plus the
// flag.
func TestRoundTrip(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	var paths []string
	for _, pat := range []string{"testdata/wat/*.wasm", "build/plugins/*.wasm", "build/bench/*.wasm"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Fatal("no modules found")
	}
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	for _, path := range paths {
		t.Run(strings.TrimPrefix(path, root+"/"), func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, info, err := Instrument(orig)
			if err != nil {
				t.Fatal(err)
			}
			if info.Functions == 0 {
				t.Error("no function instrumented")
			}
			a, err := r.CompileModule(ctx, orig)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			b, err := r.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("the rewritten module does not compile: %v", err)
			}
			defer b.Close(ctx)
			names := func(cm wazero.CompiledModule) map[string]string {
				m := map[string]string{}
				for n, d := range cm.ExportedFunctions() {
					m[n] = d.DebugName()
				}
				return m
			}
			want := names(a)
			if info.Start {
				want[StartExport] = ""
			}
			got := names(b)
			if info.Start {
				got[StartExport] = ""
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("exports (-want +got):\n%s", diff)
			}
			if got := exportedGlobals(t, out); got[FlagExport] != info.FlagIndex || len(got) != len(exportedGlobals(t, orig))+1 {
				t.Errorf("exported globals %v, want the original ones and %s = %d", got, FlagExport, info.FlagIndex)
			}
			// Joined data segments write the same memory.
			if want, ok := dataImage(t, orig); ok {
				if got, _ := dataImage(t, out); !bytes.Equal(got, want) {
					t.Errorf("the data segments write another memory (%d segments joined)", info.Coalesced)
				}
			}
		})
	}
}

// exportedGlobals returns the module's exported globals by name.
func exportedGlobals(t *testing.T, wasm []byte) map[string]uint32 {
	t.Helper()
	m := &module{}
	if err := m.split(wasm); err != nil {
		t.Fatal(err)
	}
	out := map[string]uint32{}
	b := m.find(secExport)
	if b == nil {
		return out
	}
	r := reader{b: b}
	n, err := r.u32()
	for range n {
		var name []byte
		var kind byte
		var idx uint32
		if name, err = r.name(); err == nil {
			if kind, err = r.byte(); err == nil {
				idx, err = r.u32()
			}
		}
		if err != nil {
			break
		}
		if kind == 0x03 {
			out[string(name)] = idx
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wazeroAccepts reports whether wazero's interpreter (the same decoder and
// validator as the compiler) accepts wasm.
func wazeroAccepts(r wazero.Runtime, wasm []byte) bool {
	cm, err := r.CompileModule(context.Background(), wasm)
	if err != nil {
		return false
	}
	_ = cm.Close(context.Background())
	return true
}

// FuzzInstrument: any input either is refused or yields a module, never
// a panic, and wazero accepts a rewritten module only if it accepted the
// original: the rewrite never makes an invalid module valid. (Whether it
// accepts every module wazero accepts is TestRoundTrip's question, on real
// modules: a fuzzed header announcing a billion parameters makes wazero
// allocate that much before it notices the module is short.)
func FuzzInstrument(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "testdata", "wat", "*.wasm"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(header))
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	f.Fuzz(func(t *testing.T, in []byte) {
		out, info, err := Instrument(in)
		// Measure is the same decoder without the rewrite: it refuses
		// what Instrument refuses and measures the same shape.
		sh, merr := Measure(in, 0)
		if (err == nil) != (merr == nil) {
			t.Fatalf("Instrument: %v; Measure: %v", err, merr)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(info.Shape, sh); diff != "" {
			t.Fatalf("shapes differ (-Instrument +Measure):\n%s", diff)
		}
		if wazeroAccepts(r, out) && !wazeroAccepts(r, in) {
			t.Fatal("wazero accepts the rewrite of a module it refuses")
		}
	})
}
