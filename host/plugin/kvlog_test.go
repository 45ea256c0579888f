package plugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// wchar returns the bytes this process has passed to write calls, from
// /proc/self/io, or -1 where there is none.
func wchar(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return -1
}

func mustOpenStore(t *testing.T, path string, quota int64) *MemoryStore {
	t.Helper()
	s, err := OpenFileStore(path, quota)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGet(t *testing.T, s Store, key, want string) {
	t.Helper()
	v, err := s.Get(key)
	if err != nil || string(v) != want {
		t.Errorf("Get(%q) = %q, %v; want %q", key, v, err, want)
	}
}

// TestKVWriteCost: 100 one-byte writes into a full 1 MiB store cost what
// they change: the file grows by their records only, is never rewritten,
// and the process writes about that much. Before, every write rewrote and
// synced the whole store (133 MB for these 100 writes).
func TestKVWriteCost(t *testing.T) {
	path := filepath.Join(t.TempDir(), kvLogName)
	s := mustOpenStore(t, path, 1<<20)
	defer s.Close()
	for i := range 4 {
		if err := s.Set(fmt.Sprintf("big%d", i), bytes.Repeat([]byte{'x'}, 250_000)); err != nil {
			t.Fatal(err)
		}
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	w0 := wchar(t)
	const writes, perWrite = 100, 32 // a record of a 5-byte key and a 1-byte value is 16 bytes
	for i := range writes {
		if err := s.Set(fmt.Sprintf("s%04d", i%10), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	w1 := wchar(t)
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("the store's file was replaced: the writes rewrote it")
	}
	if grew := after.Size() - before.Size(); grew <= 0 || grew > writes*perWrite {
		t.Errorf("file grew by %d bytes for %d one-byte writes, want 1 to %d", grew, writes, writes*perWrite)
	}
	if w0 >= 0 && w1-w0 > writes*perWrite*2 {
		t.Errorf("%d one-byte writes wrote %d bytes, want at most %d", writes, w1-w0, writes*perWrite*2)
	}
	t.Logf("%d one-byte writes: file grew %d bytes, the process wrote %d", writes, after.Size()-before.Size(), w1-w0)
	mustGet(t, s, "s0009", string([]byte{99}))
}

// TestKVTornTail: a record cut short by a crash, or failing its checksum,
// is ignored on reopen and cut off, so later writes follow the last good
// record and survive the next reopen.
func TestKVTornTail(t *testing.T) {
	for _, tail := range []struct {
		name string
		b    []byte
	}{
		{"cut short", appendRecord(nil, kvOpSet, "c", []byte("3"))[:11]},
		{"bad checksum", func() []byte { r := appendRecord(nil, kvOpSet, "c", []byte("3")); r[len(r)-1] ^= 1; return r }()},
		{"header only", []byte{9, 0, 0}},
	} {
		t.Run(tail.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), kvLogName)
			s := mustOpenStore(t, path, 1<<20)
			for _, kv := range []string{"a=1", "b=2", "a=10"} {
				k, v, _ := strings.Cut(kv, "=")
				if err := s.Set(k, []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			good, _ := os.Stat(path)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(tail.b)
			f.Close()

			s = mustOpenStore(t, path, 1<<20)
			mustGet(t, s, "a", "10")
			mustGet(t, s, "b", "2")
			if _, err := s.Get("c"); err != ErrNotFound {
				t.Errorf("the torn record was applied: %v", err)
			}
			if info, _ := os.Stat(path); info.Size() != good.Size() {
				t.Errorf("size after reopen %d, want the good %d", info.Size(), good.Size())
			}
			if err := s.Set("d", []byte("4")); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s = mustOpenStore(t, path, 1<<20)
			defer s.Close()
			mustGet(t, s, "a", "10")
			mustGet(t, s, "d", "4")
		})
	}
}

// TestKVCompaction: overwriting one key again and again keeps the log
// within twice the live records (plus the compaction threshold), and a
// reopen reads the last value.
func TestKVCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), kvLogName)
	s := mustOpenStore(t, path, 1<<20)
	val := func(i int) []byte { return []byte(fmt.Sprintf("%01000d", i)) }
	if err := s.Set("keep", []byte("k")); err != nil {
		t.Fatal(err)
	}
	var most int64
	for i := range 300 {
		if err := s.Set("x", val(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("gone"); err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(path)
		most = max(most, info.Size())
	}
	live := recordSize("x", val(0)) + recordSize("keep", []byte("k"))
	if bound := 2*live + kvCompactMin + recordSize("x", val(0)); most > bound {
		t.Errorf("log reached %d bytes with %d live, want at most %d", most, live, bound)
	}
	s.Close()
	s = mustOpenStore(t, path, 1<<20)
	defer s.Close()
	mustGet(t, s, "x", string(val(299)))
	mustGet(t, s, "keep", "k")
}

// TestKVMigratesJSON: a store an older corral left as kv.json is read
// once, written as the log, and removed.
func TestKVMigratesJSON(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, kvLegacyName)
	if err := os.WriteFile(legacy, []byte(`{"a":"MQ==","b":""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustOpenStore(t, filepath.Join(dir, kvLogName), 1<<20)
	mustGet(t, s, "a", "1")
	mustGet(t, s, "b", "")
	s.Close()
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("kv.json still there: %v", err)
	}
	s = mustOpenStore(t, filepath.Join(dir, kvLogName), 1<<20)
	defer s.Close()
	mustGet(t, s, "a", "1")
}

// TestKVKeysAreBytes: keys that are not UTF-8 round-trip exactly across a
// restart, through the kv host functions. Before, the JSON file turned
// them into U+FFFD: u\xff and u\xfe read as missing and u\ufffd held
// the first value.
func TestKVKeysAreBytes(t *testing.T) {
	dataDir := t.TempDir()
	keys := []string{"u\xff", "u\xfe", "u\ufffd", "u\x00"}
	e := newEnv(t, RuntimeConfig{DataDir: dataDir})
	p := e.load(t, "caps", Config{Grants: Grants{KV: true}})
	for i, k := range keys {
		if r := callCaps(t, p, fmt.Sprintf("k%s=%d", k, i)); r.N != 0 {
			t.Fatalf("set %q: %+v", k, r)
		}
	}
	p.Close(context.Background())
	e.rt.Close(context.Background())

	e2 := newEnv(t, RuntimeConfig{DataDir: dataDir})
	p2 := e2.load(t, "caps", Config{Grants: Grants{KV: true}})
	for i, k := range keys {
		if r := callCaps(t, p2, "g"+k); string(r.Out) != strconv.Itoa(i) {
			t.Errorf("after restart, %q = n %d, %s; want %d", k, r.N, r.Out, i)
		}
	}
}
