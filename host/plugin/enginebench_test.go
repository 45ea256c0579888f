package plugin

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// BenchmarkEngine compares the engines compiled into the test binary on
// the same work, named BenchmarkEngine/<measure>/<module>/<engine> so that
// interop/bench-engines.sh can print them side by side:
//
//	compile-cold    Runtime.Compile in a fresh runtime with no cache
//	compile-cached  the same over a cache directory that holds the module
//	                (a process restart)
//	instantiate     one instance, _initialize included, and its Close
//	call            one Plugin.Call of read_resource on a warm pool of one
//	throughput      Plugin.Call from GOMAXPROCS goroutines on a pool of 2
//	                (also reported as req/s)
//	memory          resident memory per warm instance after 200 calls
//	                (MiB/instance, measured once; ns/op means nothing)
//
// Modules: "wat" is testdata/wat/good.wasm (no language runtime), "go" is
// build/plugins/conformance.wasm (a Go guest; skipped when not built).
//
//	go test -tags wasmtime -run '^$' -bench '^BenchmarkEngine' ./host/plugin/
func BenchmarkEngine(b *testing.B) {
	mods := benchModules(b)
	reqs := map[string][]byte{
		"wat": []byte(`{"uri":"good://hello","principal":{"id":"bench"}}`),
		"go":  []byte(`{"uri":"test://static-text","principal":{"id":"bench"}}`),
	}
	for _, m := range engineMeasures {
		b.Run(m.name, func(b *testing.B) {
			for _, mod := range []string{"wat", "go"} {
				wasm, ok := mods[mod]
				if !ok {
					continue
				}
				b.Run(mod, func(b *testing.B) {
					for _, eng := range Engines() {
						b.Run(eng, func(b *testing.B) { m.fn(b, eng, wasm, reqs[mod]) })
					}
				})
			}
		})
	}
}

// engineMeasure is one measure of BenchmarkEngine: fn measures the module
// wasm, whose read_resource request is req, on the engine eng.
type engineMeasure struct {
	name string
	fn   func(b *testing.B, eng string, wasm, req []byte)
}

var engineMeasures = []engineMeasure{
	{"compile-cold", benchCompileCold},
	{"compile-cached", benchCompileCached},
	{"instantiate", benchInstantiate},
	{"call", benchCall},
	{"throughput", benchThroughput},
	{"memory", benchMemory},
}

func benchCompileCold(b *testing.B, eng string, wasm, _ []byte) {
	ctx := context.Background()
	for b.Loop() {
		rt := benchRuntime(b, RuntimeConfig{Engine: eng})
		if _, err := rt.Compile(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		rt.Close(ctx)
	}
}

func benchCompileCached(b *testing.B, eng string, wasm, _ []byte) {
	ctx := context.Background()
	dir := b.TempDir()
	warm := benchRuntime(b, RuntimeConfig{Engine: eng, CacheDir: dir})
	if _, err := warm.Compile(ctx, wasm); err != nil {
		b.Fatal(err)
	}
	warm.Close(ctx)
	for b.Loop() {
		rt := benchRuntime(b, RuntimeConfig{Engine: eng, CacheDir: dir})
		if _, err := rt.Compile(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		rt.Close(ctx)
	}
}

func benchInstantiate(b *testing.B, eng string, wasm, _ []byte) {
	ctx := context.Background()
	p, done := benchEnginePlugin(b, eng, wasm, 1)
	defer done()
	for b.Loop() {
		in, err := p.newInstance(ctx, p.cm)
		if err != nil {
			b.Fatal(err)
		}
		in.close(ctx)
	}
}

func benchCall(b *testing.B, eng string, wasm, req []byte) {
	ctx := context.Background()
	p, done := benchEnginePlugin(b, eng, wasm, 1)
	defer done()
	warmUp(b, p, req, 2000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
			b.Fatal(err)
		}
	}
}

func benchThroughput(b *testing.B, eng string, wasm, req []byte) {
	ctx := context.Background()
	p, done := benchEnginePlugin(b, eng, wasm, 2)
	defer done()
	warmUp(b, p, req, 2000)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchMemory(b *testing.B, eng string, wasm, req []byte) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/statm")
	}
	ctx := context.Background()
	const n = 16
	p, done := benchEnginePlugin(b, eng, wasm, 1)
	defer done()
	// Measured once: Go frees the heap to the OS first, so that the
	// instances' pages are new ones (wazero's memories live in the Go
	// heap, wasmtime's in mmap'd regions).
	var perInstance float64
	measured := false
	for b.Loop() {
		if measured {
			continue
		}
		measured = true
		debug.FreeOSMemory()
		before := rss(b)
		ins := make([]*instance, n)
		for i := range ins {
			in, err := p.newInstance(ctx, p.cm)
			if err != nil {
				b.Fatal(err)
			}
			for range 200 { // let a Go guest's heap reach its steady size
				if _, _, err := in.call(ctx, catalog.Call{Op: abi.OpReadResource, Request: req}, nil); err != nil {
					b.Fatal(err)
				}
			}
			ins[i] = in
		}
		runtime.GC()
		perInstance = float64(rss(b)-before) / n / (1 << 20)
		for _, in := range ins {
			in.close(ctx)
		}
	}
	b.ReportMetric(perInstance, "MiB/instance")
}

func benchRuntime(b *testing.B, cfg RuntimeConfig) *Runtime {
	rt, err := NewRuntime(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

func benchEnginePlugin(b *testing.B, eng string, wasm []byte, pool int) (*Plugin, func()) {
	ctx := context.Background()
	rt := benchRuntime(b, RuntimeConfig{Engine: eng})
	m, err := rt.Compile(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	p, err := rt.Load(ctx, m, Config{PoolSize: pool})
	if err != nil {
		b.Fatal(err)
	}
	return p, func() { p.Close(ctx); m.Close(ctx); rt.Close(ctx) }
}

func warmUp(b *testing.B, p *Plugin, req []byte, n int) {
	for range n {
		if _, err := invoke(p, context.Background(), abi.OpReadResource, req); err != nil {
			b.Fatal(err)
		}
	}
}

// rss returns the process's resident set size in bytes.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	f := bytes.Fields(data)
	if len(f) < 2 {
		b.Fatalf("statm: %q", data)
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}
