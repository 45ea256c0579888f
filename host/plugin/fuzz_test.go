package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"name":"good","abi":1,"schemes":["good"],"resources":[{"uri":"good://x","name":"x"}]}`))
	f.Add([]byte(`{"name":"a","abi":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}],"capabilities":["log","x"]}`))
	f.Add([]byte(`{"name":"","abi":2,"schemes":["A B"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, err := parseManifest(b)
		if err != nil {
			return
		}
		if !nameRE.MatchString(m.Name) || m.ABI != 1 {
			t.Fatalf("accepted manifest %+v", m)
		}
		for _, r := range m.Resources {
			if !strings.Contains(r.URI, ":") {
				t.Fatalf("accepted resource URI %q", r.URI)
			}
		}
	})
}

// FuzzResolve checks the files capability's core invariant: whatever the
// guest asks for, nothing outside the root is read or described.
func FuzzResolve(f *testing.F) {
	base := f.TempDir()
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(base, "secret"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(base, "secret"), filepath.Join(root, "out"))
	os.Symlink("..", filepath.Join(root, "sub", "up"))
	fr, err := newFileRoots([]string{root}, 1<<20, 100)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{root + "/a", root + "/../secret", root + "/out", root + "/sub/up/a", root + "/sub/up/up/secret", "/etc/passwd", "a", root + "//sub/./a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if b, fe := fr.read(p); fe == nil && string(b) == "s" {
			t.Fatalf("read(%q) reached the secret", p)
		}
		if fi, fe := fr.stat(p); fe == nil && !under(filepath.FromSlash(fi.Path), root) {
			t.Fatalf("stat(%q) described %q, outside the root", p, fi.Path)
		}
	})
}
