package plugin

import (
	"context"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// BenchmarkCancelLoop measures how long a call looping without host calls
// (testdata/wat/loop.wasm) runs on after its caller cancels, on each
// engine in the test binary: how soon a tasks/cancel reaches the guest
// (wazero: the interrupt flag; wasmtime: the epoch watch). Reported as
// µs/cancel; ns/op includes the 20 ms each call loops before the cancel.
//
//	go test -tags wasmtime -run '^$' -bench '^BenchmarkCancelLoop' -benchtime 50x ./host/plugin/
func BenchmarkCancelLoop(b *testing.B) {
	for _, eng := range Engines() {
		b.Run(eng, func(b *testing.B) {
			e := newEnv(b, RuntimeConfig{Engine: eng})
			p := e.load(b, "loop", Config{PoolSize: 1, Limits: Limits{Timeout: time.Minute, FailureThreshold: 1 << 30}})
			var total time.Duration
			n := 0
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				returned := make(chan time.Time, 1)
				go func() {
					_, _ = invoke(p, ctx, abi.OpReadResource, []byte(`{}`))
					returned <- time.Now()
				}()
				time.Sleep(20 * time.Millisecond) // into its loop
				start := time.Now()
				cancel()
				total += (<-returned).Sub(start)
				n++
			}
			b.ReportMetric(float64(total.Microseconds())/float64(n), "µs/cancel")
		})
	}
}
