package interrupt

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMeasure: the shape of a small module, as the host's compile limits
// read it.
func TestMeasure(t *testing.T) {
	wasm := wat(t, `(module
		(import "corral_v1" "log" (func $log (param i32 i32 i32) (result i32)))
		(memory (export "memory") 1)
		(func (export "f") (param i32) (result i32) (local i32 i64) (local f32)
			(block (loop (if (local.get 0) (then (br 2))) (block (br 1))))
			(i32.const 0))
		(func $g (local i32))
		(global (export "g") i32 (i32.const 0)))`)
	got, err := Measure(wasm, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := Shape{
		Functions: 2,
		MaxDepth:  3, // block, loop, if (the inner block is only at depth 3)
		MaxLocals: 3,
		Imports:   []Extern{{Module: "corral_v1", Name: "log", Kind: KindFunc, Params: []byte{0x7f, 0x7f, 0x7f}, Results: []byte{0x7f}}},
		Exports: []Extern{
			{Name: "memory", Kind: KindMemory},
			{Name: "f", Kind: KindFunc, Params: []byte{0x7f}, Results: []byte{0x7f}},
			{Name: "g", Kind: KindGlobal},
		},
	}
	if got.MaxBodyBytes == 0 {
		t.Error("MaxBodyBytes = 0")
	}
	got.MaxBodyBytes = 0 // depends on the encoder
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shape (-want +got):\n%s", diff)
	}
	if _, err := Measure(wasm, 3); err != nil {
		t.Errorf("Measure(depth limit 3) = %v", err)
	}
	if _, err := Measure(wasm, 2); !errors.Is(err, ErrTooDeep) {
		t.Errorf("Measure(depth limit 2) = %v, want ErrTooDeep", err)
	}
	// Measuring agrees with the rewrite.
	_, info, err := Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	info.Shape.MaxBodyBytes = 0
	if diff := cmp.Diff(want, info.Shape); diff != "" {
		t.Errorf("Instrument's shape (-want +got):\n%s", diff)
	}
}
