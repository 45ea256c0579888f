package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
)

// TestDirectoryRemovedAndRecreated: removing the whole plugin directory
// keeps the last good set serving; creating it again with other files is
// picked up through the watch alone (the periodic rescan is off).
func TestDirectoryRemovedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "1", Scheme: "a", Text: "v1"})
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "a.wasm"), old, old)
	r := startWith(t, Options{
		Dir: dir, Loader: &nativeLoader{},
		Debounce: 30 * time.Millisecond, Rescan: -1, DrainGrace: 20 * time.Millisecond,
	}, nil)
	cat := r.Catalog()
	if s, err := read(cat, "a://doc"); s != "v1" {
		t.Fatalf("a = %q, %v", s, err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// Whatever the watch's scans did meanwhile, one more finds no
	// directory and changes nothing.
	if _, err := r.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, err := read(cat, "a://doc"); s != "v1" {
		t.Fatalf("after the directory went, a = %q, %v; want it still serving", s, err)
	}
	if st := fileState(r, "a.wasm"); st.State != StateServing {
		t.Errorf("a.wasm is %q, want %q", st.State, StateServing)
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "b.wasm", spec{Name: "b", Version: "1", Scheme: "b", Text: "b1"})
	eventually(t, "b served from the recreated directory", func() bool { s, _ := read(cat, "b://doc"); return s == "b1" })
	eventually(t, "a, absent from the recreated directory, removed", func() bool {
		_, err := read(cat, "a://doc")
		e := catalog.AsError(err)
		return e != nil && e.Kind == catalog.KindResourceNotFound
	})

	// The new directory's own watch works too.
	writeSpec(t, dir, "c.wasm", spec{Name: "c", Version: "1", Scheme: "c", Text: "c1"})
	eventually(t, "c served", func() bool { s, _ := read(cat, "c://doc"); return s == "c1" })
}

// TestDirectoryCreatedLater: a directory that does not exist at start is
// watched from the moment it is created.
func TestDirectoryCreatedLater(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	r := startWith(t, Options{
		Dir: dir, Loader: &nativeLoader{},
		Debounce: 30 * time.Millisecond, Rescan: -1, DrainGrace: 20 * time.Millisecond,
	}, nil)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "a.wasm", spec{Name: "a", Version: "1", Scheme: "a", Text: "v1"})
	eventually(t, "a served", func() bool { s, _ := read(r.Catalog(), "a://doc"); return s == "v1" })
}
