package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// overheadPayload is the 1 KiB request of the plugin-overhead comparison
// (interop/bench/extism_bench_test.go sends the same bytes to Extism).
var overheadPayload = []byte(`{"uri":"echo://doc","text":"` +
	string(bytes.Repeat([]byte("x"), 1024-len(`{"uri":"echo://doc","text":""}`))) + `"}`)

// BenchmarkOverhead is one Plugin.Call of a guest that answers its request
// unchanged (testdata/echoguest, built by `make bench` into build/bench):
// corral's whole per-call path — pool hand-off, deadline, request copy,
// one wasm call with the context watchdog, result copy — around the least
// guest work possible. Row 3 of `make bench` divides it by Extism's.
func BenchmarkOverhead(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "bench", "echo-corral.wasm"))
	if err != nil {
		b.Skip("build/bench/echo-corral.wasm is missing (interop/bench.sh builds it)")
	}
	ctx := context.Background()
	p, done := benchPlugin(b, wasm, 1)
	defer done()
	for range 1000 {
		if _, err := invoke(p, ctx, abi.OpReadResource, overheadPayload); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(overheadPayload)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := invoke(p, ctx, abi.OpReadResource, overheadPayload)
		if err != nil {
			b.Fatal(err)
		}
		if len(out) != len(overheadPayload) {
			b.Fatalf("echo returned %d bytes, want %d", len(out), len(overheadPayload))
		}
	}
}

// BenchmarkPoolScaling is one plugin under 8 concurrent callers with a pool
// of 1 and of 2 instances: the benchmark fixture plugin (plugins/bench/
// fixture, a Go guest built by `make bench`) reading its 1 KiB resource.
// A pool of 1 is the single mutex-guarded instance some plugin hosts use;
// row 4 of `make bench` divides the two throughputs.
func BenchmarkPoolScaling(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "bench", "plugins", "bfx000.wasm"))
	if err != nil {
		b.Skip("build/bench/plugins/bfx000.wasm is missing (interop/bench.sh builds it)")
	}
	req := []byte(`{"uri":"bfx000://doc","principal":{"id":"bench"}}`)
	for _, n := range []int{1, 2} {
		b.Run("instances="+string(rune('0'+n)), func(b *testing.B) {
			ctx := context.Background()
			p, done := benchPlugin(b, wasm, n)
			defer done()
			warm := func() { // every instance to its steady heap size
				for range 3000 {
					if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
						b.Error(err)
						return
					}
				}
			}
			ch := make(chan struct{})
			for range n {
				go func() { warm(); ch <- struct{}{} }()
			}
			for range n {
				<-ch
			}
			b.SetParallelism(4)
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

// BenchmarkFixtureCall is one call at a time to the benchmark fixture
// plugin (a Go guest on the guest SDK) on a warm pool of one: what the
// Wasm rows of `make bench` pay per request inside the plugin runtime.
// Every loop iteration and function entry of the guest checks the
// interrupt flag (docs/engines.md), once an exit to the host under
// WithCloseOnContextDone; this is the figure the SDK's hot paths are
// tuned against.
func BenchmarkFixtureCall(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "bench", "plugins", "bfx000.wasm"))
	if err != nil {
		b.Skip("build/bench/plugins/bfx000.wasm is missing (interop/bench.sh builds it)")
	}
	ops := []struct {
		name string
		op   abi.Op
		req  string
	}{
		{"read", abi.OpReadResource, `{"uri":"bfx000://doc","principal":{"id":"bench"}}`},
		{"prompt", abi.OpGetPrompt, `{"name":"greet","arguments":{"name":"cand-0042","style":"concise"},"principal":{"id":"bench"}}`},
		{"complete", abi.OpComplete, `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"cand-01"},"principal":{"id":"bench"}}`},
	}
	ctx := context.Background()
	p, done := benchPlugin(b, wasm, 1)
	defer done()
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			req := []byte(o.req)
			for range 2000 {
				if _, err := invoke(p, ctx, o.op, req); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, err := invoke(p, ctx, o.op, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
