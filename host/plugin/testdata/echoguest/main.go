// Command echoguest is a minimal corral guest written against the raw ABI
// (abi/ABI.md) without the guest SDK: every operation but describe answers
// its request bytes unchanged. With interop/bench/extismguest, which does
// the same through Extism's PDK, it measures what each host's call path
// costs for one payload (BenchmarkOverhead, row 3 of `make bench`).
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo-corral.wasm ./host/plugin/testdata/echoguest
package main

import "unsafe"

func main() {}

// manifest answers describe: a plugin named echo owning the scheme echo.
var manifest = []byte(`{"name":"echo","version":"1.0.0","abi":1,"schemes":["echo"]}`)

// buf is the one request buffer the host writes into.
var buf []byte

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

//go:wasmexport corral_call
func call(op int32, n int32) int32 {
	out := buf[:n]
	if op == 1 { // describe
		out = manifest
	}
	setResult(unsafe.Pointer(unsafe.SliceData(out)), uint32(len(out)))
	return 0
}
