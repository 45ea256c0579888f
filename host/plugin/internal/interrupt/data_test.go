package interrupt

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// TestCoalesceData: the rewrite joins the data segments it may and keeps
// the others; either way the rewritten module starts with the same
// memory as the original (or fails to start as it does).
func TestCoalesceData(t *testing.T) {
	tests := []struct {
		name      string
		data      string // the module's globals and data segments
		coalesced int
		fails     bool // the original fails to instantiate
	}{
		{"runs joined", `(data (i32.const 0) "ab") (data (i32.const 10) "cd") (data (i32.const 74) "ef")`, 2, false},
		{"adjacent", `(data (i32.const 0) "ab") (data (i32.const 2) "cd")`, 1, false},
		{"a gap too wide", `(data (i32.const 0) "ab") (data (i32.const 67) "cd")`, 0, false},
		{"the second run starts after a wide gap", `(data (i32.const 0) "ab") (data (i32.const 100) "cd") (data (i32.const 110) "ef")`, 1, false},
		{"backwards", `(data (i32.const 20) "cd") (data (i32.const 0) "ab")`, 0, false},
		{"overlapping", `(data (i32.const 0) "abcd") (data (i32.const 2) "XY")`, 0, false},
		{"an earlier segment in the gap", `(data (i32.const 40) "XX") (data (i32.const 0) "ab") (data (i32.const 50) "cd")`, 0, false},
		{"an earlier segment above the gap", `(data (i32.const 400) "XX") (data (i32.const 0) "ab") (data (i32.const 50) "cd")`, 1, false},
		{"after an offset from a global", `(data (i32.const 0) "ab") (data (global.get $g) "zz") (data (i32.const 40) "cd") (data (i32.const 50) "ef")`, 0, false},
		{"before an offset from a global", `(data (i32.const 0) "ab") (data (i32.const 10) "cd") (data (global.get $g) "zz")`, 1, false},
		{"zero-length segments", `(data (i32.const 0) "") (data (i32.const 10) "cd") (data (i32.const 20) "")`, 2, false},
		{"out of bounds", `(data (i32.const 65530) "ab") (data (i32.const 65535) "cd")`, 1, true},
		{"a zero-length segment out of bounds", `(data (i32.const 65530) "ab") (data (i32.const 65537) "")`, 1, true},
	}
	ctx := context.Background()
	r := newRuntime(t)
	// The global an offset may read: 30, inside the gap of the segments
	// after it.
	env, err := r.InstantiateWithConfig(ctx, wat(t, `(module (global (export "g") i32 (i32.const 30)))`), wazero.NewModuleConfig().WithName("env"))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := wat(t, `(module (import "env" "g" (global $g i32)) (memory (export "memory") 1) `+tc.data+` (func (export "f")))`)
			out, info, err := Instrument(orig)
			if err != nil {
				t.Fatal(err)
			}
			if info.Coalesced != tc.coalesced {
				t.Errorf("%d segments joined, want %d", info.Coalesced, tc.coalesced)
			}
			cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
			a, aerr := r.InstantiateWithConfig(ctx, orig, cfg)
			b, berr := r.InstantiateWithConfig(ctx, out, cfg)
			if (aerr != nil) != tc.fails || (berr != nil) != tc.fails {
				t.Fatalf("instantiate: original %v, rewritten %v; want failures %v", aerr, berr, tc.fails)
			}
			if tc.fails {
				return
			}
			defer a.Close(ctx)
			defer b.Close(ctx)
			ma, _ := a.Memory().Read(0, a.Memory().Size())
			mb, _ := b.Memory().Read(0, b.Memory().Size())
			if !bytes.Equal(ma, mb) {
				t.Error("the rewritten module starts with another memory")
			}
		})
	}
}

// TestCoalesceDataKept: segments stay as they are when their indices can
// be named (a data count section) or the memory is imported.
func TestCoalesceDataKept(t *testing.T) {
	for name, src := range map[string]string{
		"data count section": `(module (memory 1) (data $d (i32.const 0) "ab") (data (i32.const 10) "cd")
			(func (export "f") (data.drop $d)))`,
		"imported memory": `(module (import "env" "memory" (memory 1)) (data (i32.const 0) "ab") (data (i32.const 10) "cd"))`,
	} {
		t.Run(name, func(t *testing.T) {
			orig := wat(t, src)
			out, info, err := Instrument(orig)
			if err != nil {
				t.Fatal(err)
			}
			if info.Coalesced != 0 {
				t.Errorf("%d segments joined", info.Coalesced)
			}
			a, b := &module{}, &module{}
			if err := a.split(orig); err != nil {
				t.Fatal(err)
			}
			if err := b.split(out); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.find(secData), b.find(secData)) {
				t.Error("the data section changed")
			}
		})
	}
}

// dataImage returns the memory the active data segments of wasm write,
// applied in order, or false when a segment's place is not a constant.
func dataImage(t *testing.T, wasm []byte) ([]byte, bool) {
	t.Helper()
	m := &module{}
	if err := m.split(wasm); err != nil {
		t.Fatal(err)
	}
	data := m.find(secData)
	if data == nil {
		return nil, true
	}
	segs, ok := readSegments(data)
	if !ok {
		t.Fatal("the data section does not decode")
	}
	var mem []byte
	for _, s := range segs {
		if !s.active {
			continue
		}
		if !s.simple {
			return nil, false
		}
		if end := int(s.offset) + len(s.bytes); end > len(mem) {
			mem = append(mem, make([]byte, end-len(mem))...)
		}
		copy(mem[s.offset:], s.bytes)
	}
	return bytes.TrimRight(mem, "\x00"), true
}

// TestCoalesceDataBounded: joining never makes the data section much
// larger than it was: one-byte segments spaced the widest gap apart stay
// as they are, where joining them would multiply the section's size.
func TestCoalesceDataBounded(t *testing.T) {
	var src strings.Builder
	src.WriteString(`(module (memory 2)`)
	for i := range 1000 {
		fmt.Fprintf(&src, ` (data (i32.const %d) "x")`, i*(CoalesceGap+1))
	}
	src.WriteString(`)`)
	orig := wat(t, src.String())
	out, info, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	if info.Coalesced != 0 || len(out) > len(orig)+len(orig)/4 {
		t.Errorf("%d segments joined, %d bytes from %d: want none joined", info.Coalesced, len(out), len(orig))
	}
	a, _ := dataImage(t, orig)
	b, _ := dataImage(t, out)
	if !bytes.Equal(a, b) {
		t.Error("the data segments write another memory")
	}
}
