package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// Benchmarks. Compile/cold compiles in a fresh runtime with no cache;
// Compile/filecache compiles in a fresh runtime over a file cache that
// already holds the module (a process restart). Their ratio is what the
// cache buys.

func benchModules(b *testing.B) map[string][]byte {
	mods := map[string][]byte{"wat": fixture(b, "good")}
	if wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "plugins", "conformance.wasm")); err == nil {
		mods["go"] = wasm
	}
	return mods
}

func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	for name, wasm := range benchModules(b) {
		b.Run(name+"/cold", func(b *testing.B) {
			for b.Loop() {
				rt, err := NewRuntime(ctx, RuntimeConfig{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rt.Compile(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				rt.Close(ctx)
			}
		})
		b.Run(name+"/filecache", func(b *testing.B) {
			dir := b.TempDir()
			warm, err := NewRuntime(ctx, RuntimeConfig{CacheDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := warm.Compile(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			warm.Close(ctx)
			for b.Loop() {
				rt, err := NewRuntime(ctx, RuntimeConfig{CacheDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rt.Compile(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				rt.Close(ctx)
			}
		})
	}
}

func benchPlugin(b *testing.B, wasm []byte, pool int) (*Plugin, func()) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, RuntimeConfig{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := rt.Compile(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	p, err := rt.Load(ctx, m, Config{PoolSize: pool})
	if err != nil {
		b.Fatal(err)
	}
	return p, func() { p.Close(ctx); rt.Close(ctx) }
}

// BenchmarkInstantiate creates (and closes) one instance, _initialize
// included.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	for name, wasm := range benchModules(b) {
		b.Run(name, func(b *testing.B) {
			p, done := benchPlugin(b, wasm, 1)
			defer done()
			for b.Loop() {
				in, err := p.newInstance(ctx, p.cm)
				if err != nil {
					b.Fatal(err)
				}
				in.close(ctx)
			}
		})
	}
}

// BenchmarkCallRead is the full cost of one Plugin.Call of read_resource
// on a warm pool: pool hand-off, deadline, one wasm call, output checks.
func BenchmarkCallRead(b *testing.B) {
	ctx := context.Background()
	reqs := map[string][]byte{
		"wat": []byte(`{"uri":"good://hello","principal":{"id":"bench"}}`),
		"go":  []byte(`{"uri":"test://static-text","principal":{"id":"bench"}}`),
	}
	for name, wasm := range benchModules(b) {
		b.Run(name, func(b *testing.B) {
			p, done := benchPlugin(b, wasm, 1)
			defer done()
			req := reqs[name]
			for range 2000 { // let a Go guest's heap reach its steady size
				if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			p, done := benchPlugin(b, wasm, 2)
			defer done()
			req := reqs[name]
			for range 2000 {
				if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
