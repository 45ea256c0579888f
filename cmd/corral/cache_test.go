package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRecoversCorruptCache: a server started over a compilation
// cache whose every entry was truncated (a full disk, a bad copy) serves
// its plugins, the entries recompiled, and is ready only then.
func TestServeRecoversCorruptCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"good", "caps"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "wat", name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(plugins, name+".wasm"), data, 0o644)
	}
	env := []string{"CORRAL_PLUGINS_CACHE_DIR=" + filepath.Join(dir, "cache")}
	startServeEnv(t, env, "--plugins", plugins) // fills the cache

	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "cache"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n++
		return os.Truncate(path, fi.Size()/2)
	})
	if err != nil || n == 0 {
		t.Fatalf("truncated %d cache entries: %v", n, err)
	}

	s := startServeEnv(t, env, "--plugins", plugins)
	if got := s.read(t, "good://hello"); !strings.Contains(got, "hello from wat") {
		t.Errorf("good://hello after the cache was truncated: %s", got)
	}
	if logs := s.logs.String(); !strings.Contains(logs, `"serving":2`) {
		t.Errorf("the server does not serve both plugins:\n%s", logs)
	}
}
