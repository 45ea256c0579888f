package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/atomicfile"
	"github.com/corral-mcp/corral/host/plugin/internal/interrupt"
)

// rewriteEnv is a wazero runtime on a compilation cache of its own, with
// the rewritten-module entry of good.wasm's file.
type rewriteEnv struct {
	*env
	path  string // good.wasm's file
	data  []byte
	entry string // its rewritten-module cache entry
	key   rewriteHeader
}

func newRewriteEnv(t *testing.T) *rewriteEnv {
	t.Helper()
	e := &rewriteEnv{env: newEnv(t, RuntimeConfig{CacheDir: t.TempDir(), Engine: EngineWazero})}
	e.path, e.data = writeFixture(t, t.TempDir(), "good")
	m := e.compile(t)
	var ok bool
	e.entry, e.key, ok = e.cache(t).entry(m.Digest())
	if !ok {
		t.Fatal("no rewritten-module cache for a runtime with a cache directory")
	}
	return e
}

func (e *rewriteEnv) cache(t *testing.T) rewriteCache {
	t.Helper()
	e.rt.mu.Lock()
	defer e.rt.mu.Unlock()
	return e.rt.backends[EngineWazero].(*wazeroBackend).rewrite
}

// compile compiles good.wasm's file and closes the module, so that the
// next compile finds no code held and goes through the caches again.
func (e *rewriteEnv) compile(t *testing.T) *Module {
	t.Helper()
	ctx := context.Background()
	m, err := e.rt.CompileFile(ctx, e.path, e.data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close(ctx)
	return m
}

// TestRewriteCacheEntryWritten: compiling a file stores its rewrite,
// which reads back as the rewrite of the file.
func TestRewriteCacheEntryWritten(t *testing.T) {
	e := newRewriteEnv(t)
	got, err := readRewrite(e.entry, e.key)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := interrupt.Instrument(e.data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the entry holds %d bytes, not the %d of the file's rewrite", len(got), len(want))
	}
	if st, err := os.Stat(filepath.Dir(e.entry)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("entry directory: %v, %v; want mode 0700", st, err)
	}
}

// TestRewriteCacheEntryUsed: a compile takes the rewrite from its entry
// rather than rewriting the file again: an entry holding another module
// (as only someone who can write the cache directory could make) is what
// runs.
func TestRewriteCacheEntryUsed(t *testing.T) {
	e := newRewriteEnv(t)
	other, _, err := interrupt.Instrument(fixture(t, "caps"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRewrite(e.entry, e.key, other); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := e.rt.CompileFile(ctx, e.path, e.data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	man, err := e.rt.Describe(ctx, m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if man.Name != "caps" {
		t.Errorf("described %q, want the entry's module (caps)", man.Name)
	}
	if got, err := readRewrite(e.entry, e.key); err != nil || !bytes.Equal(got, other) {
		t.Errorf("the entry was rewritten (%v)", err)
	}
}

// TestRewriteCacheBadEntry: an entry that is damaged, or made for another
// file, build or format, is discarded with a warning and replaced by the
// file's rewrite; the compile succeeds.
func TestRewriteCacheBadEntry(t *testing.T) {
	header := func(edit func(*rewriteHeader)) func([]byte) []byte {
		return func(b []byte) []byte {
			var h rewriteHeader
			if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, &h); err != nil {
				panic(err)
			}
			edit(&h)
			var out bytes.Buffer
			_ = binary.Write(&out, binary.LittleEndian, h)
			return append(out.Bytes(), b[rewriteHeaderSize:]...)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		reason string
	}{
		{"empty", func([]byte) []byte { return nil }, "header"},
		{"header cut", func(b []byte) []byte { return b[:rewriteHeaderSize-1] }, "header"},
		{"module cut", func(b []byte) []byte { return b[:len(b)/2] }, "bytes of a module of"},
		{"bytes appended", func(b []byte) []byte { return append(b, 0) }, "bytes of a module of"},
		{"byte flipped", func(b []byte) []byte { b[len(b)-10] ^= 0x40; return b }, "checksum mismatch"},
		{"another format", header(func(h *rewriteHeader) { h.Format++ }), "not an entry of format"},
		{"not an entry", header(func(h *rewriteHeader) { h.Magic[0] = 0 }), "not an entry of format"},
		{"another file", header(func(h *rewriteHeader) { h.Source[0] ^= 1 }), "another plugin file"},
		{"another build", header(func(h *rewriteHeader) { h.Host[0] ^= 1 }), "another build of corral"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRewriteEnv(t)
			b, err := os.ReadFile(e.entry)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(e.entry, tc.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := readRewrite(e.entry, e.key); err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("reading the damaged entry: %v, want an error naming %q", err, tc.reason)
			}
			before := e.rt.Compiles()
			e.compile(t)
			if n := e.rt.Compiles() - before; n != 1 {
				t.Fatalf("%d compiles, want 1", n)
			}
			// An upgrade makes every entry one of another build: those
			// are replaced without a warning, damage is warned of.
			if warned := strings.Contains(e.logs.String(), "rewritten-module cache entry discarded"); warned != (tc.name != "another build") {
				t.Errorf("warning logged: %v, want %v:\n%s", warned, !warned, e.logs)
			}
			got, err := readRewrite(e.entry, e.key)
			want, _, _ := interrupt.Instrument(e.data)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("the entry was not rebuilt: %v", err)
			}
		})
	}
}

// TestRewriteCacheNone: without a cache directory, a digest to key the
// entry by or the corral binary's digest, nothing is cached.
func TestRewriteCacheNone(t *testing.T) {
	host := func() string { return strings.Repeat("ab", 32) }
	digest := strings.Repeat("cd", 32)
	for _, tc := range []struct {
		name   string
		c      rewriteCache
		digest string
	}{
		{"no directory", rewriteCache{host: host}, digest},
		{"no digest", rewriteCache{dir: t.TempDir(), host: host}, ""},
		{"a digest that is not one", rewriteCache{dir: t.TempDir(), host: host}, "../" + digest[3:]},
		{"no host digest", rewriteCache{dir: t.TempDir(), host: func() string { return "" }}, digest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.put(tc.digest, []byte("\x00asm\x01\x00\x00\x00"))
			if _, ok := tc.c.get(tc.digest); ok {
				t.Error("an entry was kept")
			}
			if tc.c.dir != "" {
				if n := countFiles(t, filepath.Dir(tc.c.dir)); n != 0 {
					t.Errorf("%d files written", n)
				}
			}
		})
	}
}

// TestWokenFromCacheIsInterrupted: a plugin woken from the caches runs
// the rewrite, interrupt checks included: its endless loop is stopped at
// the call deadline.
func TestWokenFromCacheIsInterrupted(t *testing.T) {
	e := newEnv(t, RuntimeConfig{CacheDir: t.TempDir(), Engine: EngineWazero})
	ctx := context.Background()
	path, data := writeFixture(t, t.TempDir(), "loop")
	m, err := e.rt.CompileFile(ctx, path, data, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	const timeout = 200 * time.Millisecond
	p, err := e.rt.Load(ctx, m, Config{Source: path, SleepAfter: 10 * time.Millisecond,
		Limits: Limits{Timeout: timeout, FailureThreshold: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	m.Close(ctx)
	asleep(t, p, 1)
	e.rt.mu.Lock()
	rc := e.rt.backends[EngineWazero].(*wazeroBackend).rewrite
	e.rt.mu.Unlock()
	file, key, _ := rc.entry(m.Digest())
	if _, err := readRewrite(file, key); err != nil {
		t.Fatalf("no rewritten-module entry to wake from: %v", err)
	}
	start := time.Now()
	_, err = invoke(p, ctx, abi.OpReadResource, []byte(`{"uri":"loop://x","principal":{"id":"t"}}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTimeout {
		t.Fatalf("looping call after a wake-up: %v, want a timeout", err)
	}
	if d := time.Since(start); d > timeout+stopBound {
		t.Errorf("stopped after %v", d)
	}
	if p.Wakes() != 1 {
		t.Errorf("%d wake-ups, want 1", p.Wakes())
	}
}

// TestRewriteCacheWithoutLogger: a backend made without a logger discards
// a bad entry as one with a logger does.
func TestRewriteCacheWithoutLogger(t *testing.T) {
	b, err := newWazeroBackend(backendConfig{CacheDir: t.TempDir(), Host: func() string { return strings.Repeat("ab", 32) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	digest := strings.Repeat("cd", 32)
	file, _, ok := b.rewrite.entry(digest)
	if !ok {
		t.Fatal("no entry for a digest")
	}
	if err := atomicfile.Write(file, []byte("not an entry"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.rewrite.get(digest); ok {
		t.Fatal("a bad entry was read")
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bad entry is still there: %v", err)
	}
}
