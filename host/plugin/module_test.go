package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestWarmMetadataCache: Open of a file the metadata cache describes
// compiles and instantiates nothing, and its plugin starts asleep (or,
// never to sleep, compiles as it loads); a corrupt entry is discarded and
// the file compiled and described again.
func TestWarmMetadataCache(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	path, data := writeFixture(t, t.TempDir(), "good")
	open := func() (*env, *Module) {
		e := newEnv(t, RuntimeConfig{CacheDir: cache, MetaDir: filepath.Join(cache, "meta")})
		m, err := e.rt.Open(ctx, File{Path: path, Data: data}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(ctx) })
		if man := m.Manifest(); man == nil || man.Name != "good" {
			t.Fatalf("opened module describes %v", man)
		}
		m.mu.Lock()
		raw := m.raw
		m.mu.Unlock()
		if raw != nil {
			t.Errorf("the opened module keeps describe's answer (%d bytes) once in the metadata cache", len(raw))
		}
		return e, m
	}
	if e, _ := open(); e.rt.Compiles() != 1 {
		t.Fatalf("a cold open compiled %d times, want 1", e.rt.Compiles())
	}
	e, m := open()
	if n := e.rt.Compiles(); n != 0 {
		t.Errorf("a warm open compiled %d times, want 0", n)
	}
	p, err := e.rt.Load(ctx, m, Config{Source: path, SleepAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if p.Life() != LifeSleeping || e.rt.Compiles() != 0 {
		t.Errorf("a plugin from the metadata cache starts %s after %d compiles, want sleeping after 0", p.Life(), e.rt.Compiles())
	}
	readGood(t, p)
	if p.Wakes() != 1 || e.rt.Compiles() != 1 {
		t.Errorf("its first call: %d wake-ups, %d compiles; want 1 and 1", p.Wakes(), e.rt.Compiles())
	}
	hot, err := e.rt.Load(ctx, m, Config{Source: path, Limits: Limits{MemoryPages: 300}})
	if err != nil {
		t.Fatal(err)
	}
	defer hot.Close(ctx)
	if hot.Life() != LifeHot || e.rt.Compiles() != 2 {
		t.Errorf("a plugin that never sleeps starts %s after %d compiles, want hot after 2", hot.Life(), e.rt.Compiles())
	}

	entries, _ := filepath.Glob(filepath.Join(cache, "meta", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("%d metadata entries, want 1", len(entries))
	}
	if err := os.WriteFile(entries[0], []byte(`{"format":1,"manifest":{"name":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if e, _ := open(); e.rt.Compiles() != 1 || !strings.Contains(e.logs.String(), "metadata cache entry discarded") {
		t.Errorf("a corrupt entry: %d compiles, want 1, and a log line:\n%s", e.rt.Compiles(), e.logs.String())
	}
	if e, _ := open(); e.rt.Compiles() != 0 {
		t.Errorf("after the rebuild a warm open compiled %d times, want 0", e.rt.Compiles())
	}
}

// TestOpenedModuleSleeps: a module Open compiled and described keeps its
// code and described instance for SleepAfter only when nothing loads it
// (a start of many files binds them once all are described): then the
// runtime holds no code for it, a Load starts its plugin asleep and the
// first call wakes it. A Load in time takes the instance, and a module
// that may not sleep keeps both.
func TestOpenedModuleSleeps(t *testing.T) {
	ctx := context.Background()
	held := func(e *env) int {
		e.rt.mu.Lock()
		defer e.rt.mu.Unlock()
		return len(e.rt.code)
	}
	spare := func(m *Module) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.spare != nil
	}
	open := func(sleepAfter time.Duration) (*env, *Module, string) {
		e := newEnv(t, RuntimeConfig{})
		path, data := writeFixture(t, t.TempDir(), "good")
		m, err := e.rt.Open(ctx, File{Path: path, Data: data}, Config{SleepAfter: sleepAfter})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(ctx) })
		if !spare(m) || held(e) != 1 {
			t.Fatalf("just opened: spare %v, %d compiled modules held; want the described instance and its code", spare(m), held(e))
		}
		return e, m, path
	}

	t.Run("not loaded in time", func(t *testing.T) {
		e, m, path := open(20 * time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for spare(m) || m.pinned() || held(e) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after SleepAfter: spare %v, pinned %v, %d compiled modules held; want none", spare(m), m.pinned(), held(e))
			}
			time.Sleep(time.Millisecond)
		}
		before := e.rt.Compiles()
		p, err := e.rt.Load(ctx, m, Config{Source: path, SleepAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(ctx)
		if p.Life() != LifeSleeping || e.rt.Compiles() != before {
			t.Errorf("loaded after its code expired: %s after %d compiles, want sleeping after none", p.Life(), e.rt.Compiles()-before)
		}
		readGood(t, p)
		if p.Wakes() != 1 {
			t.Errorf("%d wake-ups after the first call, want 1", p.Wakes())
		}
	})
	t.Run("loaded in time", func(t *testing.T) {
		e, m, path := open(time.Hour)
		before := e.rt.Compiles()
		p, err := e.rt.Load(ctx, m, Config{Source: path, SleepAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(ctx)
		if p.Life() != LifeHot || spare(m) || e.rt.Compiles() != before {
			t.Errorf("loaded in time: %s, spare %v, %d compiles; want hot on the described instance", p.Life(), spare(m), e.rt.Compiles()-before)
		}
		readGood(t, p)
	})
	t.Run("never sleeps", func(t *testing.T) {
		_, m, _ := open(0)
		m.mu.Lock()
		armed := m.expiry != nil
		m.mu.Unlock()
		if armed {
			t.Error("SleepAfter 0: the module's code and instance are set to expire; want them kept")
		}
	})
}
