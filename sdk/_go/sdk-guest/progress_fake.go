//go:build !wasip1

package corral

import (
	"math"

	"github.com/corral-mcp/corral/abi"
)

// FakeProgress is a report sent with Progress.
type FakeProgress struct {
	Progress, Total float64
	Message         string
}

// Progress returns the progress reports sent so far.
func (h *FakeHost) Progress() []FakeProgress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]FakeProgress(nil), h.progressed...)
}

// progress follows the host's contract for one call: finite non-negative
// values, each report above the previous one, messages up to 4 KiB.
// ResetProgress starts a new call.
func (h *FakeHost) progress(progress, total float64, msg []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) || f < 0 }
	switch {
	case bad(progress) || bad(total):
		return abi.ErrnoInvalid
	case len(h.progressed) > 0 && progress <= h.progressed[len(h.progressed)-1].Progress:
		return abi.ErrnoInvalid
	case len(msg) > 4<<10:
		return abi.ErrnoTooLarge
	}
	h.progressed = append(h.progressed, FakeProgress{Progress: progress, Total: total, Message: string(msg)})
	return 0
}

// ResetProgress forgets the reports so far, as the host does between calls.
func (h *FakeHost) ResetProgress() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.progressed = nil
}
