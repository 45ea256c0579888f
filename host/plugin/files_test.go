package plugin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// mkfile writes a file, creating its directory.
func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFilesSwapWindow: a directory inside a granted root swapped for a
// symlink to outside between the check of a guest path and its open (the
// test hook makes that window certain) never lets a file from outside
// through. Before, the path was checked with its symlinks resolved and
// then opened again by name: the swap served the outside file.
func TestFilesSwapWindow(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	mkfile(t, filepath.Join(root, "d", "f.json"), `"inside"`)
	mkfile(t, filepath.Join(outside, "f.json"), `"SECRET"`)
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{PoolSize: 1, Grants: Grants{Files: []string{root}}})

	for _, op := range []string{"r", "s", "l"} {
		t.Run(op, func(t *testing.T) {
			dir := filepath.Join(root, "d")
			swapped := false
			beforeOpen = func() {
				if swapped {
					return
				}
				swapped = true
				if err := os.Rename(dir, dir+".old"); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(outside, dir); err != nil {
					t.Error(err)
				}
			}
			defer func() {
				beforeOpen = nil
				os.Remove(dir)
				os.Rename(dir+".old", dir)
			}()
			path := dir + "/f.json"
			if op == "l" {
				path = dir
			}
			r := callCaps(t, p, op+path)
			if !swapped {
				t.Fatal("the hook never ran")
			}
			if r.N != abi.ErrnoDenied {
				t.Errorf("n = %d, out = %s; want denied", r.N, r.Out)
			}
		})
	}
}

// TestFilesAcrossRoots: a symlink in one granted root to a file or
// directory of another granted root is refused, as a symlink out of its
// root is (each root is confined on its own). Before, it was followed.
func TestFilesAcrossRoots(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	mkfile(t, filepath.Join(a, "own.json"), `"a"`)
	mkfile(t, filepath.Join(b, "other.json"), `"b"`)
	for _, l := range [][2]string{
		{filepath.Join(b, "other.json"), filepath.Join(a, "tob.json")},
		{b, filepath.Join(a, "bdir")},
		{"../b/other.json", filepath.Join(a, "relb.json")},
		{"own.json", filepath.Join(a, "rel.json")},
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{PoolSize: 1, Grants: Grants{Files: []string{a, b}}})
	tests := []struct {
		req string
		n   int32 // -100: success
	}{
		{"r" + b + "/other.json", -100},
		{"r" + a + "/rel.json", -100},
		{"r" + a + "/tob.json", abi.ErrnoDenied},
		{"r" + a + "/relb.json", abi.ErrnoDenied},
		{"r" + a + "/bdir/other.json", abi.ErrnoDenied},
		{"s" + a + "/tob.json", abi.ErrnoDenied},
		{"l" + a + "/bdir", abi.ErrnoDenied},
	}
	for _, tt := range tests {
		r := callCaps(t, p, tt.req)
		if (tt.n == -100 && r.N < 0) || (tt.n != -100 && r.N != tt.n) {
			t.Errorf("%s: n = %d, out = %s; want %d", tt.req, r.N, r.Out, tt.n)
		}
	}
}
