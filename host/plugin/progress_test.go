package plugin

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
)

// sliceMem is a Memory over a byte slice.
type sliceMem []byte

func (m sliceMem) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m sliceMem) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], b)
	return true
}

func (m sliceMem) Size() uint32 { return uint32(len(m)) }

// sinkRec records what reaches a catalog.Sink.
type sinkRec struct{ got []string }

func (s *sinkRec) Progress(p, t float64, msg string) bool {
	s.got = append(s.got, "progress "+ftoa(p)+"/"+ftoa(t)+" "+msg)
	return true
}

func (s *sinkRec) Log(level, logger, msg string) bool {
	s.got = append(s.got, "log "+level+" "+logger+" "+msg)
	return true
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestHostProgress(t *testing.T) {
	mem := make(sliceMem, 8192)
	copy(mem, "half")
	p := &Plugin{name: "pg", obs: nopObserver{}}
	sink := &sinkRec{}
	st := &callState{p: p, inCall: true, sink: sink}
	ctx := context.WithValue(context.Background(), stateKey{}, st)
	call := func(progress, total float64, ptr, n uint32) int32 {
		stack := []uint64{math.Float64bits(progress), math.Float64bits(total), uint64(ptr), uint64(n)}
		hostProgress(ctx, mem, stack)
		return int32(uint32(stack[0]))
	}
	tests := []struct {
		name            string
		progress, total float64
		n               uint32
		want            int32
	}{
		{"first", 0, 100, 0, 0},
		{"with message", 50, 100, 4, 0},
		{"repeat", 50, 100, 0, abi.ErrnoInvalid},
		{"NaN", math.NaN(), 100, 0, abi.ErrnoInvalid},
		{"infinite total", 60, math.Inf(1), 0, abi.ErrnoInvalid},
		{"message too long", 60, 100, maxProgressMessageBytes + 1, abi.ErrnoTooLarge},
		{"last", 100, 100, 0, 0},
	}
	for _, tt := range tests {
		if got := call(tt.progress, tt.total, 0, tt.n); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	want := []string{"progress 0/100 ", "progress 50/100 half", "progress 100/100 "}
	if diff := cmp.Diff(want, sink.got); diff != "" {
		t.Errorf("sink (-want +got):\n%s", diff)
	}

	// The per-call cap.
	st.progress.reset()
	for i := range maxProgressPerCall {
		if got := call(float64(i), 0, 0, 0); got != 0 {
			t.Fatalf("report %d: %d", i, got)
		}
	}
	if got := call(1e9, 0, 0, 0); got != abi.ErrnoRateLimited {
		t.Errorf("over the cap: %d, want ErrnoRateLimited", got)
	}

	// Outside corral_call: denied.
	st.inCall = false
	if got := call(1e10, 0, 0, 0); got != abi.ErrnoDenied {
		t.Errorf("outside a call: %d, want ErrnoDenied", got)
	}
}

func TestForwardLog(t *testing.T) {
	sink := &sinkRec{}
	st := &callState{p: &Plugin{name: "pg"}, inCall: true, sink: sink}
	for _, l := range []int32{abi.LogDebug, abi.LogInfo, abi.LogWarn, abi.LogError, 9} {
		forwardLog(st, l, []byte("m"))
	}
	st.sink = nil
	forwardLog(st, abi.LogInfo, []byte("no sink"))
	want := []string{"log debug pg m", "log info pg m", "log warning pg m", "log error pg m"}
	if diff := cmp.Diff(want, sink.got); diff != "" {
		t.Errorf("forwarded (-want +got):\n%s", diff)
	}
}
