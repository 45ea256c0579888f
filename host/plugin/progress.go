package plugin

import (
	"context"
	"math"

	"github.com/corral-mcp/corral/abi"
)

// maxProgressPerCall caps the progress reports of one call.
const maxProgressPerCall = 256

// maxProgressMessageBytes caps a progress message.
const maxProgressMessageBytes = 4 << 10

// progressState is the per-call progress bookkeeping of a callState.
type progressState struct {
	sent int
	last float64
	any  bool // a report was accepted in this call
}

func (ps *progressState) reset() { *ps = progressState{} }

// hostProgress implements abi.FuncProgress: (progress f64, total f64, mptr,
// mlen i32) -> i32. The report goes to the catalog.Sink the call was given
// (catalog.Call.Sink); without one (or without a progressToken) it is
// dropped and the guest still gets 0.
func hostProgress(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncProgress
	st := mustState(ctx, fn)
	progress, total := math.Float64frombits(stack[0]), math.Float64frombits(stack[1])
	ptr, n := uint32(stack[2]), uint32(stack[3])
	checkRange(fn, mem, ptr, n)
	if !st.inCall {
		setRet(stack, abi.ErrnoDenied)
		return
	}
	ps := &st.progress
	switch {
	case !finite(progress) || progress < 0 || !finite(total) || total < 0:
		setRet(stack, abi.ErrnoInvalid)
		return
	case ps.any && progress <= ps.last:
		setRet(stack, abi.ErrnoInvalid)
		return
	case n > maxProgressMessageBytes:
		setRet(stack, abi.ErrnoTooLarge)
		return
	case ps.sent >= maxProgressPerCall:
		st.dropped(abi.FuncProgress, denyRateLimited)
		setRet(stack, abi.ErrnoRateLimited)
		return
	}
	ps.sent++
	ps.last, ps.any = progress, true
	if st.sink != nil {
		st.sink.Progress(progress, total, string(guestBytes(fn, mem, ptr, n)))
	}
	setRet(stack, 0)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// forwardLog sends a guest log line to the call's sink, if the call serves
// a request that asked for log messages.
func forwardLog(st *callState, level int32, msg []byte) {
	sink := st.sink
	if !st.inCall || sink == nil {
		return
	}
	var name string
	switch level {
	case abi.LogDebug:
		name = "debug"
	case abi.LogInfo:
		name = "info"
	case abi.LogWarn:
		name = "warning"
	case abi.LogError:
		name = "error"
	default:
		return
	}
	sink.Log(name, st.p.name, string(msg))
}
