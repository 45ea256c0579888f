package mcp

import (
	"math/bits"
	"sync"
)

// Response buffers. Every successful response Serve returns is built in a
// buffer taken from respPool; a transport that has written a response and
// keeps no reference to it hands the buffer back with Recycle, so that a
// later response reuses it instead of allocating (and zeroing) a new one.

// maxPooled is the largest buffer kept for reuse: bigger ones (rare, long
// list pages) are left to the garbage collector rather than pinned.
const maxPooled = 64 << 10

var respPool sync.Pool // of *[]byte, length 0

// responseBuffer returns an empty buffer of capacity at least n.
func ResponseBuffer(n int) []byte {
	if p, _ := respPool.Get().(*[]byte); p != nil && cap(*p) >= n {
		return *p
	}
	// A power of two, so that buffers of similar messages are
	// interchangeable (a response's and its stdio line's).
	return make([]byte, 0, max(512, 1<<bits.Len(uint(n-1))))
}

// Recycle hands back a response's buffer (Reply.Msg) once the transport has
// written it, for a later response to reuse. The caller must hold no other
// reference to msg, and must not use it afterwards; io.Writer
// implementations do not retain what they are given, so a response written
// synchronously may be recycled, while one queued for another goroutine may
// not.
func Recycle(msg []byte) {
	if cap(msg) == 0 || cap(msg) > maxPooled {
		return
	}
	msg = msg[:0]
	respPool.Put(&msg)
}
