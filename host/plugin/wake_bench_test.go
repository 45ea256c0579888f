package plugin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// BenchmarkWake is the first call of a sleeping plugin: the wake-up (the
// file read again, its code loaded from a warm compilation cache, one
// instance created) and the call. Each iteration puts the plugin back to
// sleep off the clock. It runs on every engine in the binary and reports,
// beside the mean, the median and 99th percentile of one wake-up and call
// (p50-ms, p99-ms) and the CPU time the process spent on it (cpu-ms/op:
// on a machine shared with other work the least noisy of the figures).
func BenchmarkWake(b *testing.B) {
	reqs := map[string][]byte{
		"wat": []byte(`{"uri":"good://hello","principal":{"id":"bench"}}`),
		"go":  []byte(`{"uri":"test://static-text","principal":{"id":"bench"}}`),
	}
	for _, engine := range Engines() {
		for name, wasm := range benchModules(b) {
			b.Run(engine+"/"+name, func(b *testing.B) { benchWake(b, engine, name, wasm, reqs[name]) })
		}
	}
}

func benchWake(b *testing.B, engine, name string, wasm, req []byte) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, RuntimeConfig{CacheDir: b.TempDir(), Engine: engine})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	path := filepath.Join(b.TempDir(), name+".wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	m, err := rt.CompileFile(ctx, path, wasm, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	// Asleep only when told: the timer would fire after an hour.
	p, err := rt.Load(ctx, m, Config{Source: path, SleepAfter: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	var walls []time.Duration
	var cpu time.Duration
	cpuOK := true
	for b.Loop() {
		b.StopTimer()
		p.mu.Lock()
		p.now = later
		p.mu.Unlock()
		p.sleepIfIdle()
		if p.Life() != LifeSleeping {
			b.Fatalf("not asleep: %s", p.Life())
		}
		p.mu.Lock()
		p.now = time.Now
		p.mu.Unlock()
		b.StartTimer()
		start := time.Now()
		cpu0, ok0 := processCPU()
		if _, err := invoke(p, ctx, abi.OpReadResource, req); err != nil {
			b.Fatal(err)
		}
		cpu1, ok1 := processCPU()
		walls = append(walls, time.Since(start))
		cpu += cpu1 - cpu0
		cpuOK = cpuOK && ok0 && ok1
	}
	slices.Sort(walls)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(walls[len(walls)/2]), "p50-ms")
	b.ReportMetric(ms(walls[(len(walls)*99-1)/100]), "p99-ms")
	if cpuOK {
		b.ReportMetric(ms(cpu)/float64(len(walls)), "cpu-ms/op")
	}
}
