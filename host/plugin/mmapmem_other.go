//go:build !linux

package plugin

import "context"

// withLinearMemory leaves linear memories to wazero's default allocator
// (Go byte slices) where the mmap allocator is not built.
func withLinearMemory(ctx context.Context) context.Context { return ctx }
