package plugin

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs wazero linear memories with anonymous mappings
// outside the Go heap: Allocate reserves the memory's maximum as
// inaccessible address space, growth makes the pages up to the new length
// readable and writable (the kernel supplies zeroed pages on first touch,
// so untouched pages cost no RSS), and Free unmaps everything at once.
//
// With wazero's default allocator every linear memory is a Go []byte: 100
// plugins of two Go-guest instances keep gigabytes in the Go heap, which
// the garbage collector then paces against (rare collections, fresh spans,
// page faults on the request path), and a memory's bytes return to the
// system only after a collection. The reserved address never changes, so
// growth copies nothing.
//
// withLinearMemory wires it into every instantiation: wazero takes the
// allocator from the context given to InstantiateModule.
type mmapAllocator struct{}

// withLinearMemory returns ctx carrying the allocator for the linear
// memories of the module instantiated with it.
func withLinearMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, linearMemoryAllocator)
}

// linearMemoryAllocator is the allocator withLinearMemory wires (a
// variable so that a test can count what it allocates).
var linearMemoryAllocator experimental.MemoryAllocator = mmapAllocator{}

// Allocate implements experimental.MemoryAllocator. When the kernel
// refuses the reservation the memory lives in the Go heap instead (wazero
// has no way to fail an allocation here).
func (mmapAllocator) Allocate(capacity, maxBytes uint64) experimental.LinearMemory {
	reserve := pageAlign(max(maxBytes, capacity, 1))
	buf, err := syscall.Mmap(-1, 0, int(reserve), syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return &heapMemory{max: maxBytes}
	}
	return &mmapMemory{buf: buf}
}

// pageSize is the commit granularity: the host page size.
var pageSize = uint64(syscall.Getpagesize())

func pageAlign(n uint64) uint64 { return (n + pageSize - 1) &^ (pageSize - 1) }

// mmapMemory is one linear memory: buf is the whole reservation, of which
// the first committed bytes are accessible.
type mmapMemory struct {
	buf       []byte
	committed uint64
}

// Reallocate implements experimental.LinearMemory: it returns the first
// size bytes, committing pages as needed, or nil when size is beyond the
// reservation or the kernel refuses.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	if want := pageAlign(size); want > m.committed {
		if err := syscall.Mprotect(m.buf[m.committed:want], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.committed = want
	}
	return m.buf[:size:size]
}

// Free implements experimental.LinearMemory: it unmaps the reservation.
// The memory must not be used afterwards.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.committed = nil, 0
	}
}

// heapMemory is the fallback: a Go []byte that grows by copying.
type heapMemory struct {
	buf []byte
	max uint64
}

// Reallocate implements experimental.LinearMemory.
func (h *heapMemory) Reallocate(size uint64) []byte {
	if size > h.max {
		return nil
	}
	if size > uint64(cap(h.buf)) {
		nb := make([]byte, size, min(max(size, 2*uint64(cap(h.buf))), h.max))
		copy(nb, h.buf)
		h.buf = nb
	}
	h.buf = h.buf[:size]
	return h.buf
}

// Free implements experimental.LinearMemory.
func (h *heapMemory) Free() { h.buf = nil }

var _ experimental.MemoryAllocator = mmapAllocator{}
