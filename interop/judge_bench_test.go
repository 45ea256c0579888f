package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkJudge measures, for each example provider in JUDGE_WASM, the
// latency of one resources/read (example://readme) and one
// completion/complete (the template's lang, "e") through the HTTP stack:
// the official Go SDK client on the 2026-07-28 wire, bin/corral over
// loopback, the plugin on the default engine. Named
// BenchmarkJudge/<read|complete>/<file name>; sdk/bench.sh (make bench)
// prints them beside host/plugin's BenchmarkSDKExample.
func BenchmarkJudge(b *testing.B) {
	list := os.Getenv(envJudgeWasm)
	if list == "" {
		b.Skipf("%s is unset (sdk/bench.sh sets it)", envJudgeWasm)
	}
	if why := missingBuild(corralBin); why != "" {
		b.Fatal(why)
	}
	type server struct {
		lang string
		cs   *mcp.ClientSession
	}
	var servers []server
	for _, wasm := range strings.Split(list, ",") {
		wasm = strings.TrimSpace(wasm)
		j := newJudge(b, wasm)
		servers = append(servers, server{strings.TrimSuffix(filepath.Base(wasm), ".wasm"), j.connect(b, era2026)})
	}
	ops := []struct {
		name string
		do   func(cs *mcp.ClientSession) error
	}{
		{"read", func(cs *mcp.ClientSession) error {
			_, err := cs.ReadResource(testContext(b), &mcp.ReadResourceParams{URI: "example://readme"})
			return err
		}},
		{"complete", func(cs *mcp.ClientSession) error {
			_, err := cs.Complete(testContext(b), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "example://greetings/{lang}"},
				Argument: mcp.CompleteParamsArgument{Name: "lang", Value: "e"},
			})
			return err
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for _, s := range servers {
				b.Run(s.lang, func(b *testing.B) {
					for range 200 { // warm the instance, its heap and the connection
						if err := op.do(s.cs); err != nil {
							b.Fatal(err)
						}
					}
					for b.Loop() {
						if err := op.do(s.cs); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
