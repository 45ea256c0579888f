package corral

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sdk/_go from sdk-guest and examples/go")

// goFiles lists the non-test .go files of dir, sorted.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// TestGoCopy fails when sdk/_go differs from the Go SDK and the Go example
// it copies, so the scaffold never writes stale Go sources.
func TestGoCopy(t *testing.T) {
	for dst, src := range GoCopy {
		want := goFiles(t, filepath.FromSlash(src))
		if *update {
			if err := os.RemoveAll(filepath.FromSlash(dst)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.FromSlash(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, n := range want {
				b, err := os.ReadFile(filepath.Join(filepath.FromSlash(src), n))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(filepath.FromSlash(dst), n), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := goFiles(t, filepath.FromSlash(dst))
		if !slices.Equal(got, want) {
			t.Errorf("%s has %v, %s has %v: run `go test -run TestGoCopy . -update`", dst, got, src, want)
			continue
		}
		for _, n := range want {
			orig, err := os.ReadFile(filepath.Join(filepath.FromSlash(src), n))
			if err != nil {
				t.Fatal(err)
			}
			copied, err := Sources.ReadFile(path.Join(dst, n))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(orig, copied) {
				t.Errorf("%s/%s differs from %s/%s: run `go test -run TestGoCopy . -update`", dst, n, src, n)
			}
		}
	}
}

// TestSourcesComplete checks that every SDK file a scaffold needs is
// embedded: a new file in an SDK directory must be added to the embed list.
func TestSourcesComplete(t *testing.T) {
	for _, dir := range []string{"sdk/assemblyscript/assembly", "sdk/rust/src", "sdk/c", "abi"} {
		entries, err := os.ReadDir(filepath.FromSlash(dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, "_test.go") || strings.HasSuffix(n, ".md") {
				continue
			}
			if _, err := fs.Stat(Sources, path.Join(dir, n)); err != nil {
				t.Errorf("%s/%s is not embedded in Sources (sources.go)", dir, n)
			}
		}
	}
}
