//go:build wasip1

//lint:file-ignore U1000 the host calls the go:wasmexport functions, which reach the rest.

package corral

import (
	"runtime"
	"unsafe"

	"github.com/corral-mcp/corral/abi"
)

// The host functions of abi.ImportModule. Pointers are addresses in this
// module's linear memory; every buffer passed stays referenced by the
// caller until the import returns.

//go:wasmimport corral_v1 set_result
func hostSetResult(ptr, n uint32)

//go:wasmimport corral_v1 take
func hostTake(ptr, n uint32) int32

//go:wasmimport corral_v1 log
func hostLog(level int32, ptr, n uint32) int32

//go:wasmimport corral_v1 notify
func hostNotify(kind int32, ptr, n uint32) int32

//go:wasmimport corral_v1 kv_get
func hostKVGet(kptr, klen uint32) int32

//go:wasmimport corral_v1 kv_set
func hostKVSet(kptr, klen, vptr, vlen uint32) int32

//go:wasmimport corral_v1 kv_delete
func hostKVDelete(kptr, klen uint32) int32

//go:wasmimport corral_v1 file_read
func hostFileRead(ptr, n uint32) int32

//go:wasmimport corral_v1 file_stat
func hostFileStat(ptr, n uint32) int32

//go:wasmimport corral_v1 file_list
func hostFileList(ptr, n uint32) int32

//go:wasmimport corral_v1 file_roots
func hostFileRoots() int32

//go:wasmimport corral_v1 http_fetch
func hostHTTPFetch(ptr, n uint32) int32

//go:wasmimport corral_v1 config_get
func hostConfigGet(ptr, n uint32) int32

// addr returns the address and length of b in linear memory.
func addr(b []byte) (uint32, uint32) {
	if len(b) == 0 {
		return 0, 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))
}

// wasmHost is the real host.
type wasmHost struct{}

var host hostABI = wasmHost{}

func (wasmHost) take(dst []byte) int32 {
	p, n := addr(dst)
	r := hostTake(p, n)
	runtime.KeepAlive(dst)
	return r
}

func (wasmHost) log(level int32, msg []byte) int32 {
	p, n := addr(msg)
	r := hostLog(level, p, n)
	runtime.KeepAlive(msg)
	return r
}

func (wasmHost) notify(kind int32, payload []byte) int32 {
	p, n := addr(payload)
	r := hostNotify(kind, p, n)
	runtime.KeepAlive(payload)
	return r
}

func (wasmHost) kvGet(key []byte) int32 {
	p, n := addr(key)
	r := hostKVGet(p, n)
	runtime.KeepAlive(key)
	return r
}

func (wasmHost) kvSet(key, val []byte) int32 {
	kp, kn := addr(key)
	vp, vn := addr(val)
	r := hostKVSet(kp, kn, vp, vn)
	runtime.KeepAlive(key)
	runtime.KeepAlive(val)
	return r
}

func (wasmHost) kvDelete(key []byte) int32 {
	p, n := addr(key)
	r := hostKVDelete(p, n)
	runtime.KeepAlive(key)
	return r
}

func (wasmHost) fileRead(path []byte) int32 {
	p, n := addr(path)
	r := hostFileRead(p, n)
	runtime.KeepAlive(path)
	return r
}

func (wasmHost) fileStat(path []byte) int32 {
	p, n := addr(path)
	r := hostFileStat(p, n)
	runtime.KeepAlive(path)
	return r
}

func (wasmHost) fileList(path []byte) int32 {
	p, n := addr(path)
	r := hostFileList(p, n)
	runtime.KeepAlive(path)
	return r
}

func (wasmHost) fileRoots() int32 { return hostFileRoots() }

func (wasmHost) httpFetch(req []byte) int32 {
	p, n := addr(req)
	r := hostHTTPFetch(p, n)
	runtime.KeepAlive(req)
	return r
}

func (wasmHost) configGet(key []byte) int32 {
	p, n := addr(key)
	r := hostConfigGet(p, n)
	runtime.KeepAlive(key)
	return r
}

// reqBuf is the request buffer handed to the host by corral_buffer. It is a
// package variable so that the garbage collector, which cannot see the
// host's reference, keeps it alive; it is reused across calls.
var reqBuf []byte

// minRequestBuffer is the smallest request buffer allocated.
const minRequestBuffer = 4096

//go:wasmexport corral_abi_v1
func exportABIVersion() int32 { return abi.Minor }

//go:wasmexport corral_buffer
func exportBuffer(size int32) int32 {
	if size < 0 {
		return 0
	}
	if cap(reqBuf) < int(size) || cap(reqBuf) == 0 {
		reqBuf = make([]byte, max(int(size), minRequestBuffer))
	}
	reqBuf = reqBuf[:size]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(reqBuf[:cap(reqBuf)]))))
}

//go:wasmexport corral_call
func exportCall(op, n int32) int32 {
	var st abi.Status
	var out []byte
	if n < 0 || int(n) > len(reqBuf) {
		st, out = abi.StatusError, []byte(`{"code":"invalid_params","message":"corral: request length outside the buffer"}`)
	} else {
		st, out = call(abi.Op(op), reqBuf[:n])
	}
	p, l := addr(out)
	hostSetResult(p, l)
	runtime.KeepAlive(out)
	return int32(st)
}
