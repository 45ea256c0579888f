package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/trust"
)

// testMinisignKey is the repository's public test key (testdata/keys),
// by which `make plugins` signs the bundled plugins.
const testMinisignKey = "RWTjrqwaaoxTnYGAAlgbwsFqkZ4nulEjFqb+CRMo8mrNVamAsCvawQ57"

// BenchmarkStartWithPolicy is start-up (New, Load until ready) on the
// bundled plugins, signed by make plugins, from a warm compilation cache,
// without a trust policy and with one trusting the test key: the
// difference is what checking every signature adds to a start.
func BenchmarkStartWithPolicy(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	names := []string{"conformance", "files", "issues"}
	for _, n := range names {
		for _, suffix := range []string{"", trust.MinisigSuffix} {
			data, err := os.ReadFile(filepath.Join(buildDir, "plugins", n+".wasm"+suffix))
			if err != nil {
				b.Skipf("build/plugins/%s.wasm%s: %v (run make plugins)", n, suffix, err)
			}
			os.WriteFile(filepath.Join(dir, n+".wasm"+suffix), data, 0o644)
		}
	}
	old := time.Now().Add(-time.Minute)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Chtimes(filepath.Join(dir, e.Name()), old, old)
	}
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	start := func(b *testing.B, cfg *config.Config) {
		r, err := New(Options{Dir: dir, Loader: WasmLoader(rt), Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Load(ctx, time.Minute); err != nil {
			b.Fatal(err)
		}
		if n := len(r.Catalog().Current().Providers()); n != len(names) {
			b.Fatalf("%d plugins serving, want %d: %+v", n, len(names), r.Status().Failed())
		}
		r.Close(ctx)
	}
	start(b, &config.Config{}) // fill the cache
	for _, bc := range []struct {
		name string
		cfg  *config.Config
	}{
		{"no-policy", &config.Config{}},
		{"policy", &config.Config{Plugins: config.Plugins{Trust: config.Trust{Minisign: []string{testMinisignKey}}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				start(b, bc.cfg)
			}
		})
	}
}
