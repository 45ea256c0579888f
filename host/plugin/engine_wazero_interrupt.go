package plugin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// interrupter stops a wazero instance's running call when the call's
// context is done. The instance's module was instrumented at Compile
// (package interrupt): every function entry and loop body reads the flag
// global and traps when it is not zero. A call arms the interrupter,
// context.AfterFunc raises the flag, and the call disarms it on return.
//
// Only Go writes the flag; the guest reads it with a plain load. The Go
// writes are serialised by mu, and every arm and disarm starts a new
// generation, so an AfterFunc that fires late (after its call returned)
// never touches the flag of the instance's next call.
type interrupter struct {
	flag api.MutableGlobal

	mu    sync.Mutex
	gen   uint64
	done  <-chan struct{} // the armed call's ctx.Done(); nil between calls
	fired bool            // the flag went up during the armed call
}

// arm lowers the flag for a new call and returns its generation. A
// context that is already done raises the flag at once.
func (irq *interrupter) arm(ctx context.Context) uint64 {
	irq.mu.Lock()
	defer irq.mu.Unlock()
	irq.gen++
	irq.done = ctx.Done()
	irq.fired = ctx.Err() != nil
	if irq.fired {
		irq.flag.Set(1)
	} else {
		irq.flag.Set(0)
	}
	return irq.gen
}

// fire raises the flag if generation gen is still the armed call.
func (irq *interrupter) fire(gen uint64) {
	irq.mu.Lock()
	defer irq.mu.Unlock()
	if irq.gen == gen {
		irq.flag.Set(1)
		irq.fired = true
	}
}

// disarm ends the armed call and reports whether its flag went up.
func (irq *interrupter) disarm() bool {
	irq.mu.Lock()
	defer irq.mu.Unlock()
	irq.gen++
	irq.done = nil
	return irq.fired
}

// sleep is the instance's WASI nanosleep (poll_oneoff on a clock): it
// returns after ns, or as soon as the armed call's context is done. Woken
// by the context, it raises the flag itself before returning (the
// AfterFunc that also does may not have run yet), so the guest meets its
// flag at its next check instead of running on past its deadline.
func (irq *interrupter) sleep(ns int64) {
	irq.mu.Lock()
	done, gen := irq.done, irq.gen
	irq.mu.Unlock()
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done: // nil between calls: only the timer
		irq.fire(gen)
	}
}

// call runs fn with the interrupt flag armed for ctx. A call the flag
// stopped returns an error wrapping the context's cause.
func (i *wazeroInstance) call(ctx context.Context, fn api.Function, stack []uint64) error {
	irq := i.irq
	gen := irq.arm(ctx)
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { irq.fire(gen) })
	}
	err := fn.CallWithStack(ctx, stack)
	if stop != nil {
		stop()
	}
	if irq.disarm() && err != nil {
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	return err
}
