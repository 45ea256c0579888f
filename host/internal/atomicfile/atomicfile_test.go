package atomicfile

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		write   func(string, []byte, fs.FileMode) error
		perm    fs.FileMode
		wantDir fs.FileMode
	}{
		{"private", Write, 0o600, 0o700},
		{"shared", Write, 0o644, 0o755},
		{"durable", WriteDurable, 0o600, 0o700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			path := filepath.Join(dir, "f")
			for _, content := range []string{"first", "second, longer than the first"} {
				if err := tc.write(path, []byte(content), tc.perm); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != content {
					t.Fatalf("read back %q, %v; want %q", got, err, content)
				}
			}
			assertMode(t, path, tc.perm)
			assertMode(t, dir, tc.wantDir)
			assertOnly(t, dir, "f")
		})
	}
}

// TestWriteFailureKeepsOld: a rename that cannot happen (the target is a
// directory) leaves the target as it was and no temporary file.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "inner"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Write(target, []byte("new"), 0o600)
	if err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if !bytes.Contains([]byte(err.Error()), []byte(target)) {
		t.Errorf("error %q does not name %s", err, target)
	}
	if b, err := os.ReadFile(filepath.Join(target, "inner")); err != nil || string(b) != "kept" {
		t.Errorf("old content: %q, %v", b, err)
	}
	assertOnly(t, dir, "f")
}

func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only %s", dir, names, name)
	}
}
