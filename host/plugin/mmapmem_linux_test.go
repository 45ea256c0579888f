package plugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/tetratelabs/wazero/experimental"
)

func TestLinearMemories(t *testing.T) {
	const page = 64 << 10
	tests := []struct {
		name  string
		alloc func(capacity, maxBytes uint64) experimental.LinearMemory
		fixed bool // the address never changes
	}{
		{"mmap", mmapAllocator{}.Allocate, true},
		{"heap fallback", func(_, maxBytes uint64) experimental.LinearMemory { return &heapMemory{max: maxBytes} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.alloc(page, 16*page)
			b := m.Reallocate(page)
			if len(b) != page {
				t.Fatalf("len = %d, want %d", len(b), page)
			}
			b[0], b[page-1] = 1, 2
			grown := m.Reallocate(5 * page)
			if len(grown) != 5*page {
				t.Fatalf("grown len = %d", len(grown))
			}
			if grown[0] != 1 || grown[page-1] != 2 {
				t.Error("growth lost the contents")
			}
			if !bytes.Equal(grown[page:], make([]byte, 4*page)) {
				t.Error("the grown part is not zero")
			}
			grown[5*page-1] = 3 // writable to the end
			if tt.fixed && unsafe.SliceData(grown) != unsafe.SliceData(b) {
				t.Error("growth moved the memory")
			}
			if got := m.Reallocate(16 * page); len(got) != 16*page {
				t.Errorf("growth to the maximum: len %d", len(got))
			}
			if got := m.Reallocate(16*page + 1); got != nil {
				t.Errorf("growth beyond the maximum: len %d, want nil", len(got))
			}
			m.Free()
			if tt.fixed {
				if got := m.Reallocate(page); got != nil {
					t.Error("Reallocate after Free returned memory")
				}
				m.Free() // twice is harmless
			}
		})
	}
}

// TestMmapAllocatorInstance: every wazero instance gets its memory from the
// allocator withLinearMemory wires, and guests run on mmap-backed memories:
// a Go-free fixture that grows its memory to the limit, and the canned
// resource.
func TestMmapAllocatorInstance(t *testing.T) {
	tests := []struct {
		fixture string
		op      abi.Op
		req     string
		want    string
	}{
		{"grow", abi.OpCallTool, `{}`, `{"pages":40}`},
		{"good", abi.OpReadResource, `{"uri":"good://hello","principal":{"id":"t"}}`, "hello from wat"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, tt.fixture, Config{PoolSize: 1, Limits: Limits{MemoryPages: 40}})
			if p.Engine() != EngineWazero {
				t.Skip("the allocator is wazero's")
			}
			var n atomic.Int32
			counting := experimental.MemoryAllocatorFunc(func(capacity, maxBytes uint64) experimental.LinearMemory {
				n.Add(1)
				return mmapAllocator{}.Allocate(capacity, maxBytes)
			})
			linearMemoryAllocator = counting
			defer func() { linearMemoryAllocator = mmapAllocator{} }()
			in, err := p.newInstance(context.Background(), p.cm)
			if err != nil {
				t.Fatal(err)
			}
			defer in.close(context.Background())
			if n.Load() != 1 {
				t.Fatalf("the allocator made %d memories, want 1", n.Load())
			}
			out, _, err := in.call(context.Background(), catalog.Call{Op: tt.op, Request: []byte(tt.req)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out.Body), tt.want) {
				t.Errorf("out = %s, want it to contain %s", out.Body, tt.want)
			}
		})
	}
}

// BenchmarkInstanceMemory measures what one more warm instance of the Go
// bench fixture costs, with wazero's default allocator (linear memory in
// the Go heap) and with mmapAllocator: RSS and live Go heap per instance,
// after 8 instances each served 200 reads.
//
//	go test -run '^$' -bench InstanceMemory -benchtime 1x -count 5 ./host/plugin
func BenchmarkInstanceMemory(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "bench", "plugins", "bfx000.wasm"))
	if err != nil {
		b.Skip("build/bench/plugins/bfx000.wasm is missing (interop/bench.sh builds it)")
	}
	req := []byte(`{"uri":"bfx000://doc","principal":{"id":"bench"}}`)
	const n = 8
	for _, alloc := range []struct {
		name string
		a    experimental.MemoryAllocator
	}{{"gcheap", nil}, {"mmap", mmapAllocator{}}} {
		b.Run(alloc.name, func(b *testing.B) {
			p, done := benchPlugin(b, wasm, 1)
			defer done()
			ctx := experimental.WithMemoryAllocator(context.Background(), alloc.a)
			for range b.N {
				rss0, heap0 := settledMemory(b)
				var ins []*instance
				for range n {
					in, err := p.newInstance(ctx, p.cm)
					if err != nil {
						b.Fatal(err)
					}
					for range 200 {
						if _, _, err := in.call(context.Background(), catalog.Call{Op: abi.OpReadResource, Request: req}, p.caps); err != nil {
							b.Fatal(err)
						}
					}
					ins = append(ins, in)
				}
				rss1, heap1 := settledMemory(b)
				b.ReportMetric(float64(rss1-rss0)/n/(1<<20), "RSS-MiB/inst")
				b.ReportMetric(float64(heap1-heap0)/n/(1<<20), "heap-MiB/inst")
				for _, in := range ins {
					in.close(context.Background())
				}
				runtime.KeepAlive(ins)
			}
		})
	}
}

// settledMemory collects garbage and returns the process RSS and the live
// Go heap in bytes.
func settledMemory(b *testing.B) (rss, heap int64) {
	b.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(fmt.Errorf("VmRSS: %w", err))
			}
			return kib << 10, int64(ms.HeapAlloc)
		}
	}
	b.Fatal("no VmRSS")
	return 0, 0
}
