//go:build wasip1

package corral

import "runtime"

//go:wasmimport corral_v1 progress
func hostProgress(progress, total float64, ptr, n uint32) int32

func (wasmHost) progress(progress, total float64, msg []byte) int32 {
	p, n := addr(msg)
	r := hostProgress(progress, total, p, n)
	runtime.KeepAlive(msg)
	return r
}
