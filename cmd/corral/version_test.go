package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionEngines runs the built binary's `corral version` and finds the
// wazero line carrying the version go.mod requires, marked the default, and
// no wasmtime line in a default build.
func TestVersionEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github.com/tetratelabs/wazero (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no wazero")
	}
	out, err := exec.Command(corralBinary(t), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("corral version: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(lines[0], "corral ") {
		t.Errorf("first line %q, want the corral version", lines[0])
	}
	want := "engine wazero " + string(m[1]) + " (default)"
	if len(lines) != 2 || lines[1] != want {
		t.Errorf("corral version printed %q, want a second and last line %q", out, want)
	}
}
