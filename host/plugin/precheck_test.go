package plugin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/plugin/plugintest"
)

// TestCompileRefusesBeforeCompiling: a file over a compile limit, or
// without the ABI's exports, is refused by Compile from its decoded shape.
// The engine never sees it: the compilation cache stays empty, where a
// compile would have written an entry.
func TestCompileRefusesBeforeCompiling(t *testing.T) {
	good := fixture(t, "good")
	tests := []struct {
		name   string
		wasm   []byte
		limits CompileLimits
		want   string
	}{
		{"80,000 nested blocks", plugintest.Bomb(80_000), CompileLimits{}, "blocks nested more than 1024 deep exceed plugins.compile.maxNesting (1024)"},
		{"no corral exports", fixture(t, "noexport"), CompileLimits{}, "missing export corral_call (i32, i32) -> (i32)"},
		{"file size", good, CompileLimits{MaxFileBytes: 100}, "exceeds plugins.compile.maxFileBytes (100)"},
		{"function count", good, CompileLimits{MaxFunctions: 2}, "functions exceed plugins.compile.maxFunctions (2)"},
		{"function size", good, CompileLimits{MaxFunctionBytes: 10}, "exceeds plugins.compile.maxFunctionBytes (10)"},
		{"nesting", good, CompileLimits{MaxNesting: 1}, "exceed plugins.compile.maxNesting (1)"},
		{"locals", good, CompileLimits{MaxLocals: 1}, "exceeds plugins.compile.maxLocals (1)"},
		{"not wasm", []byte("\x00asm\x02\x00\x00\x00"), CompileLimits{}, "a WebAssembly binary of version 2, and corral loads version 1 core modules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			e := newEnv(t, RuntimeConfig{CacheDir: cache, Compile: tt.limits})
			m, err := e.rt.Compile(context.Background(), tt.wasm)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("compiled, want a refusal")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if n := cacheEntries(t, cache); n != 0 {
				t.Errorf("the cache holds %d entries: the file was compiled", n)
			}
		})
	}
}

// TestBundledGuestsWithinCompileLimits: the default limits admit the Go
// guests they were sized from.
func TestBundledGuestsWithinCompileLimits(t *testing.T) {
	for _, name := range []string{"conformance", "files", "issues"} {
		t.Run(name, func(t *testing.T) {
			if err := precheck(builtGuest(t, name), DefaultCompileLimits, hostFuncs()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// builtGuest reads build/plugins/<name>.wasm, skipping when it is not built.
func builtGuest(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "build", "plugins", name+".wasm"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("build/plugins/%s.wasm is missing; run make plugins", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cacheEntries counts the files under a compilation cache directory.
func cacheEntries(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
