package registry

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// TestSleepingKeepsNoFileBytes: after a first start (no metadata cache)
// of distinct Go guests that then fall asleep, the heap holds nothing
// near the size of their files: the bytes read to hash and compile them
// are garbage once they are compiled. (The module's closure that reads
// the file again once kept them, through the plugin.File it captured.)
func TestSleepingKeepsNoFileBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Go guests")
	}
	names := []string{"conformance", "files", "issues"}
	dir := t.TempDir()
	old := time.Now().Add(-time.Minute)
	var size int64
	for _, n := range names {
		b := builtPlugin(t, n)
		writeRaw(t, dir, n+".wasm", b)
		os.Chtimes(filepath.Join(dir, n+".wasm"), old, old)
		size += int64(len(b))
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	rt := wasmRuntime(t)
	s := config.DefaultPlugin()
	s.Limits.SleepAfter = 20 * time.Millisecond
	cfg := &config.Config{Plugin: map[string]config.Plugin{}}
	for _, n := range names {
		cfg.Plugin[n] = s
	}
	r := startWith(t, Options{
		Dir: dir, Loader: WasmLoader(rt), Config: cfg,
		Debounce: 30 * time.Millisecond, Rescan: time.Hour, DrainGrace: 20 * time.Millisecond,
		SetOptions: catalog.Options{Pages: catalog.NewPageCache(0)},
	}, nil)
	for _, n := range names {
		within(t, 10*time.Second, n+" asleep", func() bool {
			return fileState(r, n+".wasm").Life == plugin.LifeSleeping
		})
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d sleeping Go guests (%d KiB of files): heap grew %d KiB", len(names), size>>10, grew>>10)
	if grew > size/2 {
		t.Errorf("heap grew %d KiB with %d sleeping Go guests, whose files are %d KiB: their bytes are kept", grew>>10, len(names), size>>10)
	}
}
