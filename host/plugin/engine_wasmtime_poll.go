//go:build wasmtime

package plugin

import (
	"context"
	"encoding/binary"
	"math"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// WASI preview 1 layout of poll_oneoff's subscriptions and events.
const (
	wasiSubscriptionSize = 48
	// wasiMaxSubscriptions bounds what one call may make the host hold (a
	// guest sleeps with one; Go's runtime adds one per descriptor it
	// waits on, and a guest has two).
	wasiMaxSubscriptions = 1024
	wasiEventSize        = 32

	wasiEventClock   = 0
	wasiEventFdRead  = 1
	wasiEventFdWrite = 2

	wasiClockRealtime = 0
	wasiAbstime       = 1 // subclockflags: the timeout is an absolute time

	wasiInval    = 28
	wasiNotsup   = 58
	wasiOverflow = 61
)

// wtPollOneoff is wasi_snapshot_preview1.poll_oneoff. wasmtime's own
// sleeps in its thread for the whole timeout, which epoch interruption
// cannot stop, so a guest would sleep past its call's deadline. This one
// sleeps until the earliest clock subscription or until the running
// call's context is done, whichever comes first; in the second case it
// traps, and the call fails as a timeout (or as canceled). A guest has
// no descriptor to wait on but stdout and stderr, which are always ready
// to write; any other descriptor answers EBADF at once.
func wtPollOneoff(c *wasmtime.Caller, args []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	in, out, n, nevents := uint32(args[0].I32()), uint32(args[1].I32()), uint32(args[2].I32()), uint32(args[3].I32())
	ret := func(errno int32) ([]wasmtime.Val, *wasmtime.Trap) {
		return []wasmtime.Val{wasmtime.ValI32(errno)}, nil
	}
	if n == 0 || n > wasiMaxSubscriptions {
		return ret(wasiInval)
	}
	m := callerMemory(c)
	if m == nil {
		return ret(wasiFault)
	}
	d := m.data()
	if uint64(in)+uint64(n)*wasiSubscriptionSize > uint64(len(d)) ||
		uint64(out)+uint64(n)*wasiEventSize > uint64(len(d)) ||
		uint64(nevents)+4 > uint64(len(d)) {
		return ret(wasiFault)
	}
	now := time.Now()
	at := make([]time.Time, n) // when each clock subscription fires
	wake := time.Time{}        // the earliest of them
	ready := false             // a descriptor subscription answers at once
	for i := range n {
		s := d[in+i*wasiSubscriptionSize:]
		switch s[8] {
		case wasiEventClock:
			id := binary.LittleEndian.Uint32(s[16:])
			timeout := binary.LittleEndian.Uint64(s[24:])
			switch {
			case binary.LittleEndian.Uint16(s[40:])&wasiAbstime == 0:
				if timeout > math.MaxInt64 {
					return ret(wasiOverflow)
				}
				at[i] = now.Add(time.Duration(timeout))
			case id == wasiClockRealtime:
				if timeout > math.MaxInt64 {
					return ret(wasiOverflow)
				}
				at[i] = time.Unix(0, int64(timeout))
			default: // an absolute monotonic time: its origin is wasmtime's own
				return ret(wasiNotsup)
			}
			if wake.IsZero() || at[i].Before(wake) {
				wake = at[i]
			}
		case wasiEventFdRead, wasiEventFdWrite:
			ready = true
		default:
			return ret(wasiInval)
		}
	}
	if !ready {
		ctx := context.Background()
		if inst, ok := c.Data().(*wtInstance); ok && inst.ctx != nil {
			ctx = inst.ctx
		}
		t := time.NewTimer(time.Until(wake))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, wasmtime.NewTrap("interrupted: the call's deadline passed during poll_oneoff")
		}
		now = time.Now()
	}
	var events uint32
	for i := range n {
		s := d[in+i*wasiSubscriptionSize:]
		if s[8] == wasiEventClock && (ready || at[i].After(now) && !at[i].Equal(wake)) {
			continue // not due (with descriptors ready, no time passed)
		}
		e := d[out+events*wasiEventSize : out+(events+1)*wasiEventSize]
		clear(e)
		copy(e[0:8], s[0:8]) // userdata
		e[10] = s[8]
		if s[8] != wasiEventClock {
			if fd := binary.LittleEndian.Uint32(s[16:]); s[8] == wasiEventFdRead || (fd != 1 && fd != 2) {
				binary.LittleEndian.PutUint16(e[8:], wasiBadf)
			}
		}
		events++
	}
	binary.LittleEndian.PutUint32(d[nevents:], events)
	return ret(wasiSuccess)
}
