package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	extism "github.com/extism/go-sdk"
)

// overheadPayload is the same 1 KiB request host/plugin's BenchmarkOverhead
// sends to corral's echo guest.
var overheadPayload = []byte(`{"uri":"echo://doc","text":"` +
	string(bytes.Repeat([]byte("x"), 1024-len(`{"uri":"echo://doc","text":""}`))) + `"}`)

// BenchmarkOverhead is one Extism Plugin.Call of extismguest's echo, the
// same guest logic as corral's testdata/echoguest, built with the stock Go
// toolchain. "timeout" gives the plugin a 5 s call timeout, as corral
// always has (Extism then enables wazero's WithCloseOnContextDone, as
// corral does); "no-timeout" shows Extism without it.
func BenchmarkOverhead(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "bench", "echo-extism.wasm"))
	if err != nil {
		b.Skip("build/bench/echo-extism.wasm is missing (interop/bench.sh builds it)")
	}
	for _, tc := range []struct {
		name    string
		timeout uint64
	}{{"timeout", 5000}, {"no-timeout", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			m := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Timeout: tc.timeout}
			p, err := extism.NewPlugin(ctx, m, extism.PluginConfig{EnableWasi: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(ctx)
			for range 1000 {
				if _, _, err := p.CallWithContext(ctx, "echo", overheadPayload); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(overheadPayload)))
			b.ReportAllocs()
			for b.Loop() {
				_, out, err := p.CallWithContext(ctx, "echo", overheadPayload)
				if err != nil {
					b.Fatal(err)
				}
				if len(out) != len(overheadPayload) {
					b.Fatalf("echo returned %d bytes, want %d", len(out), len(overheadPayload))
				}
			}
		})
	}
}
