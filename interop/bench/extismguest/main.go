//go:build wasip1

// Command extismguest is the Extism counterpart of corral's
// host/plugin/testdata/echoguest: its export echo answers its input bytes
// unchanged, through Extism's Go PDK. Built with the stock Go toolchain:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo-extism.wasm ./bench/extismguest
package main

import "github.com/extism/go-pdk"

func main() {}

//go:wasmexport echo
func echo() int32 {
	pdk.Output(pdk.Input())
	return 0
}
