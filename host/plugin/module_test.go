package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFixture copies testdata/wat/<name>.wasm to dir and returns its path
// and bytes.
func writeFixture(t *testing.T, dir, name string) (string, []byte) {
	t.Helper()
	data := fixture(t, name)
	path := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestLoadServesTheDescribedInstance: a file is instantiated once to be
// described and to serve; the first plugin runs on the described instance
// and compiles nothing more.
func TestLoadServesTheDescribedInstance(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	ctx := context.Background()
	path, data := writeFixture(t, t.TempDir(), "good")
	m, err := e.rt.CompileFile(ctx, path, data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	man, err := e.rt.Describe(ctx, m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if man.Name != "good" || m.Manifest() != man {
		t.Fatalf("described %q; module keeps %v", man.Name, m.Manifest())
	}
	described := m.spare
	if described == nil {
		t.Fatal("Describe kept no instance")
	}
	p, err := e.rt.Load(ctx, m, Config{Source: path})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if len(p.idle) != 1 || p.idle[0].in != described {
		t.Errorf("the plugin's warm instance is not the one that described the module")
	}
	if n := e.rt.Compiles(); n != 1 {
		t.Errorf("%d compiles, want 1", n)
	}
	readGood(t, p)
}

// TestModuleRereadsItsFile: a module made from a file keeps no copy of
// it. Code for new limits is compiled from the file read again, shared
// while some plugin holds it, and refused when the file changed.
func TestModuleRereadsItsFile(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	ctx := context.Background()
	dir := t.TempDir()
	path, data := writeFixture(t, dir, "good")
	m, err := e.rt.CompileFile(ctx, path, data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	load := func(pages uint32) (*Plugin, error) {
		p, err := e.rt.Load(ctx, m, Config{Source: path, Limits: Limits{MemoryPages: pages}})
		if err == nil {
			t.Cleanup(func() { p.Close(ctx) })
		}
		return p, err
	}
	first, err := load(0)
	if err != nil {
		t.Fatal(err)
	}
	readGood(t, first)
	if _, err := load(0); err != nil { // the same limits: the first plugin's code
		t.Fatal(err)
	}
	if n := e.rt.Compiles(); n != 1 {
		t.Errorf("%d compiles after two plugins under one limit, want 1", n)
	}
	other, err := load(300) // new limits: the file again
	if err != nil {
		t.Fatal(err)
	}
	readGood(t, other)
	if n := e.rt.Compiles(); n != 2 {
		t.Errorf("%d compiles after a new limit, want 2", n)
	}

	// Another file of the same bytes shares the code.
	twin := filepath.Join(dir, "twin.wasm")
	if err := os.WriteFile(twin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m2, err := e.rt.CompileFile(ctx, twin, data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	m2.Close(ctx)
	if n := e.rt.Compiles(); n != 2 {
		t.Errorf("%d compiles after a second file of the same bytes, want 2", n)
	}

	// Replaced: the new bytes are refused, not compiled under the old
	// digest.
	if err := os.WriteFile(path, fixture(t, "caps"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(400); err == nil || !strings.Contains(err.Error(), "changed since it was loaded") {
		t.Errorf("load after the file changed: %v, want a refusal naming the change", err)
	}
	// Gone: a host failure.
	os.Remove(path)
	if _, err := load(500); !errors.Is(err, ErrHost) {
		t.Errorf("load after the file went: %v, want ErrHost", err)
	}
	readGood(t, first) // what runs is unaffected
}
