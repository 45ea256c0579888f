// Command gocommand is a corral guest built the wrong way on purpose: its
// exports are right, but the host test builds it without
// -buildmode=c-shared, so it is a WASI command whose Go runtime is never
// initialised (every export traps in runtime.notInitialized).
package main

//go:wasmexport corral_abi_v1
func abiV1() int32 { return 2 }

//go:wasmexport corral_buffer
func buffer(size int32) int32 { return 0 }

//go:wasmexport corral_call
func call(op, size int32) int32 { return 1 }

func main() {}
