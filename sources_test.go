package corral

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourcesComplete checks that every SDK file a scaffold needs is
// embedded: a new file in an SDK directory must be added to the embed list.
func TestSourcesComplete(t *testing.T) {
	for _, dir := range []string{"sdk/assemblyscript/assembly", "sdk/rust/src", "sdk/c", "abi", "sdk-guest"} {
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
