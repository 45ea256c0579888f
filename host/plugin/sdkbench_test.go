package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSDKExample measures the example provider of docs/plugins.md §2,
// built by each SDK (the .wasm files in JUDGE_WASM, comma-separated), on
// the default engine: BenchmarkSDKExample/<measure>/<file name>, for
// compile-cold, compile-cached, instantiate and memory as BenchmarkEngine
// defines them. sdk/bench.sh (make bench) prints them beside the HTTP
// latencies of interop's BenchmarkJudge, one row per language.
//
//	JUDGE_WASM=$PWD/build/examples/c.wasm go test -run '^$' -bench '^BenchmarkSDKExample$' ./host/plugin/
func BenchmarkSDKExample(b *testing.B) {
	list := os.Getenv("JUDGE_WASM")
	if list == "" {
		b.Skip("JUDGE_WASM is unset (sdk/bench.sh sets it)")
	}
	req := []byte(`{"uri":"example://readme","principal":{"id":"bench"}}`)
	for _, m := range engineMeasures {
		if m.name == "call" || m.name == "throughput" { // the HTTP stack's latencies stand for these
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			for _, path := range strings.Split(list, ",") {
				wasm, err := os.ReadFile(strings.TrimSpace(path))
				if err != nil {
					b.Fatal(err)
				}
				b.Run(strings.TrimSuffix(filepath.Base(path), ".wasm"), func(b *testing.B) { m.fn(b, DefaultEngine, wasm, req) })
			}
		})
	}
}
