package registry

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// TestProbeUnderConfiguredLimits: a file's first instantiation (its
// initialization and describe, before the host knows its name) runs under
// the configured limits, not the defaults. bigmem.wasm starts with 300
// pages of memory, above the default 256: it loads when the entry bound
// to it, or (unbound) any entry, allows more, and fails otherwise.
func TestProbeUnderConfiguredLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Wasm plugins")
	}
	bigmem := watFixture(t, "bigmem")
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	entry := func(b config.Binding) config.Plugin {
		p := config.DefaultPlugin()
		p.Binding, p.Limits.MemoryPages = b, 512
		return p
	}
	tests := []struct {
		name   string
		cfg    func(dir string) *config.Config
		serves bool
	}{
		{"no entry: default limits", func(string) *config.Config { return &config.Config{} }, false},
		{"its entry, unbound", func(string) *config.Config {
			return &config.Config{Plugin: map[string]config.Plugin{"bigmem": entry(config.Binding{})}}
		}, true},
		{"its entry, bound by file", func(dir string) *config.Config {
			return &config.Config{Plugin: map[string]config.Plugin{"bigmem": entry(config.Binding{File: filepath.Join(dir, "bigmem.wasm")})}}
		}, true},
		{"its entry, bound by digest", func(string) *config.Config {
			return &config.Config{Plugin: map[string]config.Plugin{"bigmem": entry(config.Binding{SHA256: digestOf(bigmem)})}}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeOld(t, dir, map[string][]byte{"bigmem.wasm": bigmem})
			r := start(t, dir, WasmLoader(rt), tt.cfg(dir), nil)
			s, err := read(r.Catalog(), "bigmem://hello")
			if !tt.serves {
				if err == nil {
					t.Fatalf("bigmem served under the default memory limit")
				}
				if f := fileState(r, "bigmem.wasm"); f.State != StateFailed || !strings.Contains(f.Error, "memory") {
					t.Errorf("bigmem.wasm: %+v, want failed for its memory", f)
				}
				return
			}
			if err != nil || s != "big hello" {
				t.Fatalf("bigmem://hello = %q, %v; file %+v", s, err, fileState(r, "bigmem.wasm"))
			}
		})
	}
}
