package plugin

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKVFormatVersion: a new log starts with its format's header; a
// headerless log of version 0 (what corral wrote before) is read and
// rewritten with the header, its entries kept; a log of a version this
// corral does not know is refused with an error naming the file and both
// versions, and left as it is.
func TestKVFormatVersion(t *testing.T) {
	t.Run("new", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), kvLogName)
		s := mustOpenStore(t, path, 1<<20)
		if err := s.Set("a", []byte("1")); err != nil {
			t.Fatal(err)
		}
		s.Close()
		b, _ := os.ReadFile(path)
		if !bytes.HasPrefix(b, kvHeaderBytes()) || string(b[:8]) != "CORRALKV" || binary.LittleEndian.Uint32(b[8:]) != 1 {
			t.Fatalf("log starts %q, want CORRALKV and version 1", b[:min(len(b), 12)])
		}
	})
	t.Run("version 0", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), kvLogName)
		v0 := appendRecord(appendRecord(nil, kvOpSet, "a", []byte("1")), kvOpSet, "b", []byte("2"))
		if err := os.WriteFile(path, v0, 0o600); err != nil {
			t.Fatal(err)
		}
		s := mustOpenStore(t, path, 1<<20)
		mustGet(t, s, "a", "1")
		mustGet(t, s, "b", "2")
		if err := s.Set("c", []byte("3")); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, kvHeaderBytes()) {
			t.Errorf("a version-0 log is not rewritten with the header: %q", b)
		}
		s = mustOpenStore(t, path, 1<<20)
		defer s.Close()
		mustGet(t, s, "a", "1")
		mustGet(t, s, "c", "3")
	})
	t.Run("unknown version", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), kvLogName)
		v2 := binary.LittleEndian.AppendUint32([]byte(kvMagic), 2)
		v2 = appendRecord(v2, kvOpSet, "a", []byte("1"))
		if err := os.WriteFile(path, v2, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenFileStore(path, 1<<20)
		if err == nil || !strings.Contains(err.Error(), path+" is in format version 2; this corral reads version 1") {
			t.Fatalf("error %v, want a refusal naming the file and versions", err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, v2) {
			t.Errorf("the refused log was changed: %q", b)
		}
	})
}
