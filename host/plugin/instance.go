package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// stateKey carries the *callState of the running guest call to host
// functions through the context.
type stateKey struct{}

// callState is what host functions know about the guest call they serve.
// One instance runs one call at a time, so it needs no lock.
type callState struct {
	p    *Plugin
	caps *capSet      // nil: no capabilities (during _initialize and describe)
	sink catalog.Sink // the request's progress and log sink; nil: none
	// ungranted is the first capability a host function refused in this
	// call because the operator did not grant it (catalog.Result.Denied).
	ungranted string

	inCall    bool
	result    []byte
	resultSet bool
	oversize  int // the length set_result was given when over the limit

	pending    []byte
	hasPending bool

	progress progressState
}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// instance is one guest instance with the host-side state of its calls.
type instance struct {
	inst   Instance
	callFn Function
	bufFn  Function
	mem    Memory
	stderr *tailBuffer
	state  callState
	stack  [2]uint64

	bufPtr, bufCap uint32
	calls          int
}

// newInstance instantiates the plugin's module and runs _initialize. No
// capability is usable during _initialize.
func (p *Plugin) newInstance(ctx context.Context, cm CompiledModule) (*instance, error) {
	in := &instance{stderr: newTailBuffer(p.cfg.Limits.StderrBytes)}
	in.state.p = p
	ictx, cancel := context.WithTimeout(ctx, p.cfg.Limits.Timeout)
	defer cancel()
	ictx = context.WithValue(ictx, stateKey{}, &in.state)
	inst, err := cm.Instantiate(ictx, InstanceConfig{
		StartFunctions: []string{abi.ExportInitialize},
		Stderr:         in.stderr,
	})
	if err != nil {
		if tail := in.stderr.String(); tail != "" {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		return nil, err
	}
	in.inst = inst
	in.callFn = inst.Function(abi.ExportCall)
	in.bufFn = inst.Function(abi.ExportBuffer)
	in.mem = inst.Memory()
	if in.callFn == nil || in.bufFn == nil || in.mem == nil {
		_ = inst.Close(ctx)
		return nil, errors.New("instance lacks the ABI exports")
	}
	if p.manifest != nil { // the first instance is reported once the name is known
		p.obs.Instance(p.name, true, "")
	}
	return in, nil
}

func (in *instance) close(ctx context.Context) {
	_ = in.inst.Close(ctx)
}

// marker calls corral_abi_v1 and returns the guest's ABI minor.
func (in *instance) marker(ctx context.Context) (uint32, error) {
	fn := in.inst.Function(abi.ExportMarker)
	if fn == nil {
		return 0, errors.New("missing export " + abi.ExportMarker)
	}
	var stack [1]uint64
	cctx, cancel := context.WithTimeout(ctx, in.state.p.cfg.Limits.Timeout)
	defer cancel()
	cctx = context.WithValue(cctx, stateKey{}, &in.state)
	if err := fn.Call(cctx, stack[:]); err != nil {
		return 0, err
	}
	return uint32(stack[0]), nil
}

// call runs one operation. It returns the guest's status and payload, the
// class of the outcome and, for a host-level failure, an error; a declared
// failure (ClassGuestError) and a request for input are results, not
// errors. caps nil runs without capabilities.
func (in *instance) call(ctx context.Context, c catalog.Call, caps *capSet) (catalog.Result, ErrorClass, error) {
	p := in.state.p
	st := &in.state
	op, req := c.Op, c.Request
	st.caps, st.sink, st.ungranted = caps, c.Sink, ""
	st.result, st.resultSet, st.oversize = nil, false, 0
	st.pending, st.hasPending = nil, false
	st.progress.reset()
	in.calls++

	timeout := p.cfg.Limits.Timeout
	if c.TaskDeadline > 0 { // a task's run: the tool's own deadline
		timeout = c.TaskDeadline
	}
	if c.Timeout > 0 {
		timeout = min(timeout, c.Timeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cctx = context.WithValue(cctx, stateKey{}, st)
	defer func() {
		st.pending, st.hasPending = nil, false
		st.result, st.sink = nil, nil
	}()

	n := uint32(len(req))
	if n > in.bufCap {
		size := max(n, 1024)
		in.stack[0] = uint64(size)
		if err := in.bufFn.Call(cctx, in.stack[:]); err != nil {
			return catalog.Result{}, classify(ctx, cctx), fmt.Errorf("%s: %w", abi.ExportBuffer, err)
		}
		ptr := uint32(in.stack[0])
		if ptr == 0 {
			return catalog.Result{}, ClassBadOutput, fmt.Errorf("%s(%d) returned 0", abi.ExportBuffer, size)
		}
		if uint64(ptr)+uint64(size) > uint64(in.mem.Size()) {
			return catalog.Result{}, ClassBadOutput, fmt.Errorf("%s(%d) returned %#x, beyond memory", abi.ExportBuffer, size, ptr)
		}
		in.bufPtr, in.bufCap = ptr, size
	}
	if n > 0 && !in.mem.Write(in.bufPtr, req) {
		return catalog.Result{}, ClassBadOutput, errors.New("request buffer is beyond memory")
	}

	in.stack[0], in.stack[1] = uint64(op), uint64(n)
	st.inCall = true
	err := in.callFn.Call(cctx, in.stack[:])
	st.inCall = false
	if err != nil {
		if st.oversize > 0 {
			return catalog.Result{}, ClassOversize, fmt.Errorf("response of %d bytes is over the limit of %d", st.oversize, p.cfg.Limits.MaxResponseBytes)
		}
		return catalog.Result{}, classify(ctx, cctx), err
	}
	// A guest woken from a sleep at its deadline may answer before any
	// interrupt check runs (wazero's flag and wasmtime's epochs are read
	// only by wasm code): whatever it answered, a call that ends past its
	// deadline failed.
	if expired(cctx) {
		cause := cctx.Err()
		if cause == nil { // the deadline passed; its timer has not fired yet
			cause = context.DeadlineExceeded
		}
		return catalog.Result{}, classify(ctx, cctx), fmt.Errorf("%s returned after its deadline: %w", abi.ExportCall, cause)
	}
	if !st.resultSet {
		return catalog.Result{}, ClassBadOutput, fmt.Errorf("%s returned without calling %s", abi.ExportCall, abi.FuncSetResult)
	}
	res := catalog.Result{Status: abi.Status(int32(uint32(in.stack[0]))), Body: st.result, Denied: st.ungranted}
	switch res.Status {
	case abi.StatusOK:
		// Not scanned here: the catalog reads it once, strictly, and
		// reports a refusal back (RejectOutput), which counts like a bad
		// output.
		return res, ClassOK, nil
	case abi.StatusError:
		var e abi.Error
		if err := jsonread.Unmarshal(res.Body, &e); err != nil {
			return catalog.Result{}, ClassBadOutput, fmt.Errorf("error response is not a well-formed error object: %w", err)
		} else if e.Code == "" {
			return catalog.Result{}, ClassBadOutput, errors.New("error response is not a well-formed error object: no code")
		}
		return res, ClassGuestError, nil
	case abi.StatusInputRequired:
		var ir abi.InputRequired
		if err := jsonread.Unmarshal(res.Body, &ir); err != nil {
			return catalog.Result{}, ClassBadOutput, fmt.Errorf("input-required response is not a well-formed InputRequired object: %w", err)
		} else if len(ir.InputRequests) == 0 && ir.State == "" {
			return catalog.Result{}, ClassBadOutput, errors.New("input-required response is not a well-formed InputRequired object: neither inputRequests nor state")
		}
		// Asking the client is an answer, not a failure: the catalog
		// validates the requests and seals the state.
		return res, ClassOK, nil
	default:
		return catalog.Result{}, ClassBadOutput, fmt.Errorf("%s returned unknown status %d", abi.ExportCall, int32(res.Status))
	}
}

// classify names the failure of a wasm call: a deadline, the caller giving
// up, or a trap.
func classify(parent, cctx context.Context) ErrorClass {
	if expired(cctx) {
		if expired(parent) {
			return ClassCanceled
		}
		return ClassTimeout
	}
	return ClassTrap
}

// expired reports whether ctx is done or its deadline has passed (the
// context's own timer may not have fired yet).
func expired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{max: n} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(b) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (t *tailBuffer) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}
