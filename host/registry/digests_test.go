package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// readCounter passes compiles on, counting those given the file's bytes
// (the others were given only the digest the record knew).
type readCounter struct {
	Loader
	read, unread atomic.Int64
}

func (l *readCounter) Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error) {
	if data == nil {
		l.unread.Add(1)
	} else {
		l.read.Add(1)
	}
	return l.Loader.Compile(ctx, path, data, digest, probe)
}

// withCustom returns wasm with a custom section named "x" holding payload
// appended: the same plugin, another digest.
func withCustom(wasm []byte, payload string) []byte {
	body := append([]byte{1, 'x'}, payload...)
	return append(append(append([]byte{}, wasm...), 0, byte(len(body))), body...)
}

// TestDigestRecord: with a digest record, a restart over unchanged files
// reads none of them (and still serves them); a file rewritten in place to
// the same size with its modification time restored is read and hashed
// again, and its new content serves; a file changed within the racy
// window is not recorded; a corrupt record is discarded and rebuilt.
func TestDigestRecord(t *testing.T) {
	ctx := context.Background()
	cache, dir := t.TempDir(), t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", "good.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	caps, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", "caps.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	put := func(name string, b []byte) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil { // in place: the same inode
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	put("good.wasm", withCustom(good, "aaaa"))
	put("caps.wasm", caps)
	record := filepath.Join(cache, "digests.json")
	const window = 50 * time.Millisecond
	time.Sleep(2 * window) // the files' change times now lie outside the window
	// boot starts a registry over dir whose record trusts files whose
	// times are window older than their read, and returns how many files
	// its compiles were given and not given, and the digest good serves.
	boot := func(window time.Duration) (given, notGiven int64, digest string) {
		t.Helper()
		rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: cache, MetaDir: filepath.Join(cache, "meta")})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		l := &readCounter{Loader: WasmLoader(rt)}
		r, err := New(Options{Dir: dir, Loader: l, Debounce: 10 * time.Millisecond, Rescan: -1, DigestFile: record})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		r.digests.window = window
		if err := r.Load(ctx, time.Minute); err != nil || !r.Ready() {
			t.Fatalf("load: %v, ready %v", err, r.Ready())
		}
		if s, err := read(r.Catalog(), "good://hello"); err != nil || s == "" {
			t.Fatalf("read good://hello = %q, %v", s, err)
		}
		for _, p := range r.Catalog().Current().Providers() {
			if p.Manifest().Name == "good" {
				digest = p.Digest()
			}
		}
		return l.read.Load(), l.unread.Load(), digest
	}
	digestB := sha256Hex(withCustom(good, "bbbb"))

	if read, unread, _ := boot(window); read != 2 || unread != 0 {
		t.Fatalf("first start: %d files read, %d not, want 2 and 0", read, unread)
	}
	if _, err := os.Stat(record); err != nil {
		t.Fatalf("no digest record after the first start: %v", err)
	}
	if read, unread, _ := boot(window); read != 0 || unread != 2 {
		t.Errorf("restart: %d files read, %d not, want 0 and 2", read, unread)
	}

	put("good.wasm", withCustom(good, "bbbb")) // same size, same mtime
	time.Sleep(2 * window)
	if read, unread, digest := boot(window); read != 1 || unread != 1 || digest != digestB {
		t.Errorf("after good.wasm was rewritten in place: %d files read, %d not, good serves %.12s; want 1, 1 and %.12s",
			read, unread, digest, digestB)
	}
	if read, unread, _ := boot(window); read != 0 || unread != 2 {
		t.Errorf("restart after the rewrite: %d files read, %d not, want 0 and 2", read, unread)
	}

	// Changed within the window before its read (a window of an hour
	// stands for a write in the read's tick): hashed, served, not recorded.
	put("good.wasm", withCustom(good, "aaaa"))
	if read, _, digest := boot(time.Hour); read != 1 || digest != sha256Hex(withCustom(good, "aaaa")) {
		t.Errorf("a file changed within the window: %d read, good serves %.12s", read, digest)
	}
	time.Sleep(2 * window)
	if read, _, _ := boot(window); read != 1 {
		t.Errorf("the start after: %d files read, want 1 (the file changed within the window was not recorded)", read)
	}

	if err := os.WriteFile(record, []byte(`{"format":1,"files":{"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if read, unread, _ := boot(window); read != 2 || unread != 0 {
		t.Errorf("corrupt record: %d files read, %d not, want 2 and 0", read, unread)
	}
	if read, unread, _ := boot(window); read != 0 || unread != 2 {
		t.Errorf("after the corrupt record was rebuilt: %d files read, %d not, want 0 and 2", read, unread)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
