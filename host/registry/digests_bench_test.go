package registry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkFileDigest is what a start pays per plugin file of a Go
// guest's size (4 MB) to know its digest: reading and hashing it, or
// (with the digest record of digests.go) a stat and a look-up.
//
//	go test -run '^$' -bench FileDigest ./host/registry
func BenchmarkFileDigest(b *testing.B) {
	path := filepath.Join(b.TempDir(), "p.wasm")
	data := make([]byte, 4<<20)
	rand.Read(data)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	d := openDigests(filepath.Join(b.TempDir(), "digests.json"), slog.New(slog.DiscardHandler))
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	id, ok := fileIDOf(fi)
	if !ok {
		b.Skip("no file identity on this platform")
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	d.record(path, id, want, time.Now().Add(time.Hour))
	b.Run("read+sha256", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != want {
				b.Fatal("another digest")
			}
		}
	})
	b.Run("record", func(b *testing.B) {
		for b.Loop() {
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			id, _ := fileIDOf(fi)
			if d.lookup(path, id) != want {
				b.Fatal("not recorded")
			}
		}
	})
}
