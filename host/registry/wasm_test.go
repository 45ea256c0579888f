package registry

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// buildDir is the repository's build/ directory (make plugins).
var buildDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "build")
}()

func builtPlugin(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join(buildDir, "plugins", name+".wasm")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("build/plugins/%s.wasm missing (run make plugins): %v", name, err)
	}
	return data
}

// withCustomSection returns wasm plus a custom section: a different file
// (another digest) that is still the same valid module.
func withCustomSection(wasm []byte, tag string) []byte {
	name := "corral-test"
	payload := append([]byte{byte(len(name))}, name...)
	payload = append(payload, tag...)
	out := append([]byte(nil), wasm...)
	out = append(out, 0) // custom section id
	n := len(payload)
	for { // unsigned LEB128 size
		b := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			out = append(out, b|0x80)
			continue
		}
		out = append(out, b)
		break
	}
	return append(out, payload...)
}

// TestHotReloadUnderLoadWasm is TestHotReloadUnderLoad with the real Wasm
// runtime: readers of the conformance plugin see no error while the files
// plugin is added, replaced, corrupted and removed.
func TestHotReloadUnderLoadWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Wasm plugins")
	}
	conf := builtPlugin(t, "conformance")
	files := builtPlugin(t, "files")
	// The replacement: the issues plugin if it is built, else files with an
	// extra custom section (a new digest, so a cold compile).
	replacement := withCustomSection(files, "v2")
	if data, err := os.ReadFile(filepath.Join(buildDir, "plugins", "issues.wasm")); err == nil {
		replacement = data
	}
	ctx := context.Background()
	// The cache make run uses, so that only new code is compiled cold.
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	// Registered before start's cleanup, so it runs after the registry
	// has stopped and closed its plugins.
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "conformance.wasm"), conf, 0o644)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "conformance.wasm"), old, old)
	r := start(t, dir, WasmLoader(rt), nil, nil)
	if s, err := read(r.Catalog(), "test://static-text"); err != nil || s != catalogtest.StaticText {
		t.Fatalf("conformance not serving: %q, %v\n%+v", s, err, r.Status())
	}
	digestOf := func() string { return fileState(r, "files.wasm").Digest }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second) // a cold compile of a Go guest takes ~1.5s, more under -race
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 30s: %s\n%+v", what, r.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	hammer(t, 2, r.Catalog(), "test://static-text", catalogtest.StaticText, func() {
		writeRaw(t, dir, "files.wasm", files)
		waitFor("files added", func() bool { return fileState(r, "files.wasm").State == StateServing })
		first := digestOf()
		writeRaw(t, dir, "files.wasm", replacement)
		waitFor("files replaced", func() bool { d := digestOf(); return d != "" && d != first })
		second := digestOf()
		writeRaw(t, dir, "files.wasm", files[:len(files)/2])
		waitFor("corrupt file reported", func() bool { return fileState(r, "files.wasm").State == StateFailed })
		if d := digestOf(); d != second {
			t.Errorf("after corruption the serving digest is %s, want the last good %s", d, second)
		}
		os.Remove(filepath.Join(dir, "files.wasm"))
		waitFor("files removed", func() bool { return fileState(r, "files.wasm").Path == "" })
	})
	if n := len(r.Catalog().Current().Providers()); n != 1 {
		t.Errorf("%d providers at the end, want 1", n)
	}
}

// TestBundledGuestsCompile compiles and describes every bundled Go guest
// through the WasmLoader and the shared compilation cache (build/cache).
// `make test-race` runs it once without the race detector before the race
// run: the detector slows wazero's compiler about sixfold, and the tests of
// this package that load the Go guests then find them compiled.
func TestBundledGuestsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Wasm plugins")
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	l := WasmLoader(rt)
	for _, name := range []string{"conformance", "files", "issues"} {
		data := builtPlugin(t, name)
		m, err := l.Compile(ctx, name+".wasm", data, "", config.DefaultPlugin())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := m.Manifest().Name; got != name {
			t.Errorf("%s.wasm describes itself as %q", name, got)
		}
		m.Close(ctx)
	}
}
