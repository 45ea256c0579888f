// Command spinguest is a corral guest written against the raw ABI that
// misbehaves on request, for the wazero engine's interrupt tests: the
// request "spin" (a JSON string) runs `for {}`, "sleep" sleeps an hour
// (WASI poll_oneoff on a clock), "recurse" makes 2^62 calls, anything
// else is echoed.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o spin.wasm ./host/plugin/testdata/spinguest
package main

import (
	"time"
	"unsafe"
)

func main() {}

var manifest = []byte(`{"name":"spin","version":"1.0.0","abi":1,"schemes":["spin"]}`)

var buf []byte

// sink keeps the recursion's result alive.
var sink int

//go:wasmimport corral_v1 set_result
func setResult(ptr unsafe.Pointer, n uint32)

//go:wasmexport corral_abi_v1
func abiMinor() int32 { return 2 } // ABI 1.2

//go:wasmexport corral_buffer
func buffer(size int32) unsafe.Pointer {
	if size < 1 {
		size = 1
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:cap(buf)]
	return unsafe.Pointer(&buf[0])
}

// fan calls itself twice per level: 2^depth calls, no loop.
//
//go:noinline
func fan(depth int) int {
	if depth == 0 {
		return 1
	}
	return fan(depth-1) + fan(depth-1)
}

//go:wasmexport corral_call
func call(op int32, n int32) int32 {
	out := buf[:n]
	if op == 1 { // describe
		out = manifest
	} else {
		switch string(out) {
		case `"spin"`:
			for {
			}
		case `"sleep"`:
			time.Sleep(time.Hour)
		case `"recurse"`:
			sink = fan(62)
		}
	}
	setResult(unsafe.Pointer(unsafe.SliceData(out)), uint32(len(out)))
	return 0
}
