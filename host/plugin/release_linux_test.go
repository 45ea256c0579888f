package plugin

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// codeBytes returns the size of the process's anonymous executable
// mappings: compiled plugin code.
func codeBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 || !strings.HasPrefix(fields[1], "r-x") { // a path: not anonymous
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("maps line %q", sc.Text())
		}
		n += int64(h - l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSleepReturnsMemory: a Go guest that goes to sleep on wazero gives
// its code back, mappings and all, once the runtime released memory (wazero
// unmaps code only from a finalizer), and wakes up served again after
// that: loaded → sleeping (released) → woken → sleeping (released) →
// woken. (wasmtime's code is not an anonymous executable mapping of its
// own; its module frees it when closed.)
func TestSleepReturnsMemory(t *testing.T) {
	src := filepath.Join("..", "..", "build", "plugins", "conformance.wasm")
	wasm, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is missing; run make plugins", src)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conformance.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"uri":"test://static-text","principal":{"id":"t"}}`)
	ctx := context.Background()
	e := newEnv(t, RuntimeConfig{Engine: EngineWazero, ReleaseAfter: 10 * time.Millisecond,
		CacheDir: filepath.Join(os.TempDir(), "corral-plugin-test-cache")}) // goguest_test.go's: compiled once
	// The engine's own code (wazero's trampolines, made at its
	// first compile) stays: compile something small first.
	small, err := e.rt.Compile(ctx, fixture(t, "good"))
	if err != nil {
		t.Fatal(err)
	}
	small.Close(ctx)
	before := codeBytes(t)
	m, err := e.rt.CompileFile(ctx, path, wasm, Config{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.rt.Load(ctx, m, Config{Source: path, SleepAfter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	m.Close(ctx)
	for round := int64(1); round <= 2; round++ {
		code := codeBytes(t) - before
		if code < 1<<20 {
			t.Fatalf("round %d: the hot plugin's code takes %d bytes of executable mappings, want more than 1 MiB", round, code)
		}
		releases := e.rt.Releases()
		asleep(t, p, round)
		// Polled without allocating, so that the test itself
		// triggers no collection: the release must free the code.
		deadline := time.Now().Add(10 * time.Second)
		for e.rt.Releases() == releases {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: asleep, and no release", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// wazero unmaps code from a finalizer, which the release's
		// collection queues. What the engine keeps (trampolines made
		// for the guest's first instance) is a few pages.
		deadline = time.Now().Add(2 * time.Second)
		for {
			left := codeBytes(t) - before
			if left < code/10 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: released, and %d of the %d bytes of code still mapped", round, left, code)
			}
			time.Sleep(20 * time.Millisecond)
		}
		out, err := invoke(p, ctx, abi.OpReadResource, req)
		if err != nil {
			t.Fatalf("round %d: the call after the release: %v", round, err)
		}
		if !strings.Contains(string(out), "test://static-text") {
			t.Fatalf("round %d: read after the wake-up: %s", round, out)
		}
		if n := p.Wakes(); n != round {
			t.Errorf("round %d: %d wake-ups", round, n)
		}
	}
}
