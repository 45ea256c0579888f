package plugin

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/trace"
)

// tracer starts the plugin runtime's spans: one per call, with its wait
// for an instance and the guest's run as attributes, and one per host
// call of the guest's, its child.
var tracer = trace.NewTracer("github.com/corral-mcp/corral/host/plugin")

// Limits on arguments a guest passes to host functions that are not
// covered by Limits.
const (
	maxKeyBytes     = 1024
	maxPathBytes    = 4096
	maxLogBytes     = 8 << 10
	maxHTTPReqBytes = 1 << 20
)

func i32s(n int) []ValueType {
	out := make([]ValueType, n)
	for i := range out {
		out[i] = I32
	}
	return out
}

// hostFuncs returns every host function of the ABI. Each is linked into
// every instance; capability checks happen per call.
func hostFuncs() []HostFunc {
	ret := []ValueType{I32}
	return []HostFunc{
		// The result handoff is part of every call, not a host call of the
		// guest's: untraced.
		{abi.FuncSetResult, Signature{Params: i32s(2)}, hostSetResult},
		{abi.FuncTake, Signature{Params: i32s(2), Results: ret}, hostTake},
		{abi.FuncLog, Signature{Params: i32s(3), Results: ret}, traced(abi.FuncLog, hostLog)},
		{abi.FuncNotify, Signature{Params: i32s(3), Results: ret}, traced(abi.FuncNotify, hostNotify)},
		{abi.FuncProgress, Signature{Params: []ValueType{F64, F64, I32, I32}, Results: ret}, traced(abi.FuncProgress, hostProgress)},
		{abi.FuncKVGet, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncKVGet, hostKVGet)},
		{abi.FuncKVSet, Signature{Params: i32s(4), Results: ret}, traced(abi.FuncKVSet, hostKVSet)},
		{abi.FuncKVDelete, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncKVDelete, hostKVDelete)},
		{abi.FuncFileRead, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncFileRead, hostFileRead)},
		{abi.FuncFileStat, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncFileStat, hostFileStat)},
		{abi.FuncFileList, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncFileList, hostFileList)},
		{abi.FuncFileRoots, Signature{Results: ret}, traced(abi.FuncFileRoots, hostFileRoots)},
		{abi.FuncHTTP, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncHTTP, hostHTTP)},
		{abi.FuncConfigGet, Signature{Params: i32s(2), Results: ret}, traced(abi.FuncConfigGet, hostConfigGet)},
	}
}

// traced wraps a host function so that each call of a traced plugin call
// is a span "host.NAME", a child of plugin.call, carrying the function and
// its outcome (also when it traps); what the guest passed is never
// recorded. The name and the start options are built once per function,
// not per call. fn runs on the caller's context: nothing below a host
// function starts spans.
func traced(name string, fn func(ctx context.Context, mem Memory, stack []uint64)) func(ctx context.Context, mem Memory, stack []uint64) {
	spanName := "host." + name
	opts := []oteltrace.SpanStartOption{oteltrace.WithAttributes(trace.HostFunc.String(name))}
	return func(ctx context.Context, mem Memory, stack []uint64) {
		if !oteltrace.SpanFromContext(ctx).IsRecording() {
			fn(ctx, mem, stack)
			return
		}
		_, span := tracer.Start(ctx, spanName, opts...)
		trapped := true
		defer func() {
			if trapped {
				span.SetAttributes(outcomeTrap)
				span.SetStatus(codes.Error, "trap")
			} else {
				span.SetAttributes(hostOutcome(int32(uint32(stack[0]))))
			}
			span.End()
		}()
		fn(ctx, mem, stack)
		trapped = false
	}
}

// The outcomes of a host call's span: ok (a result of 0 or more), the
// errno's name, or trap.
var (
	outcomeOK    = trace.HostOutcome.String("ok")
	outcomeTrap  = trace.HostOutcome.String("trap")
	outcomeOther = trace.HostOutcome.String("errno")
	outcomes     = map[int32]attribute.KeyValue{
		abi.ErrnoDenied:      trace.HostOutcome.String("denied"),
		abi.ErrnoNotFound:    trace.HostOutcome.String("not_found"),
		abi.ErrnoInvalid:     trace.HostOutcome.String("invalid"),
		abi.ErrnoQuota:       trace.HostOutcome.String("quota"),
		abi.ErrnoTooLarge:    trace.HostOutcome.String("too_large"),
		abi.ErrnoIO:          trace.HostOutcome.String("io"),
		abi.ErrnoRateLimited: trace.HostOutcome.String("rate_limited"),
		abi.ErrnoTimeout:     trace.HostOutcome.String("timeout"),
	}
)

// hostOutcome is the outcome attribute of a host function's result.
func hostOutcome(ret int32) attribute.KeyValue {
	if ret >= 0 {
		return outcomeOK
	}
	if kv, ok := outcomes[ret]; ok {
		return kv
	}
	return outcomeOther
}

// mustState returns the state of the running call; a host function called
// outside any instance of ours, or after the call's deadline (a guest that
// woke from a sleep at its deadline), traps.
func mustState(ctx context.Context, fn string) *callState {
	st := stateFrom(ctx)
	if st == nil {
		violate(fn, "no call in progress")
	}
	if ctx.Err() != nil {
		violate(fn, "called after the call's deadline")
	}
	return st
}

// guestBytes returns a copy of guest memory [ptr, ptr+n); out of bounds
// traps.
func guestBytes(fn string, mem Memory, ptr, n uint32) []byte {
	if n == 0 {
		return nil
	}
	b, ok := mem.Read(ptr, n)
	if !ok {
		violate(fn, "range [%#x, +%d) is outside memory of %d bytes", ptr, n, mem.Size())
	}
	return append([]byte(nil), b...)
}

// checkRange traps if [ptr, ptr+n) is outside memory. A length of 0 is
// valid whatever the pointer (ABI.md §5).
func checkRange(fn string, mem Memory, ptr, n uint32) {
	if n > 0 && uint64(ptr)+uint64(n) > uint64(mem.Size()) {
		violate(fn, "range [%#x, +%d) is outside memory of %d bytes", ptr, n, mem.Size())
	}
}

func setRet(stack []uint64, v int32) { stack[0] = uint64(uint32(v)) }

// setOutput makes out the pending output and returns its length.
func (st *callState) setOutput(stack []uint64, out []byte) {
	st.pending, st.hasPending = out, true
	setRet(stack, int32(len(out)))
}

// denied records a refused capability call and returns ErrnoDenied.
func (st *callState) denied(stack []uint64, capability string, reason denyReason) {
	if reason == denyNotGranted && st.ungranted == "" {
		st.ungranted = capability
	}
	st.dropped(capability, reason)
	if reason == denyNotGranted {
		st.p.logUngranted(capability)
	}
	setRet(stack, abi.ErrnoDenied)
}

// dropped records a host call refused or dropped for reason.
func (st *callState) dropped(capability string, reason denyReason) {
	st.p.obs.Denied(st.p.name, capability, string(reason))
}

func hostSetResult(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncSetResult
	st := mustState(ctx, fn)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if !st.inCall {
		violate(fn, "called outside %s", abi.ExportCall)
	}
	if st.resultSet {
		violate(fn, "called twice in one call")
	}
	checkRange(fn, mem, ptr, n)
	if int64(n) > int64(st.p.cfg.Limits.MaxResponseBytes) {
		st.oversize = int(n)
		violate(fn, "response of %d bytes is over the limit of %d", n, st.p.cfg.Limits.MaxResponseBytes)
	}
	st.result = guestBytes(fn, mem, ptr, n)
	if st.result == nil {
		st.result = []byte{}
	}
	st.resultSet = true
}

func hostTake(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncTake
	st := mustState(ctx, fn)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	checkRange(fn, mem, ptr, n)
	if !st.hasPending {
		setRet(stack, abi.ErrnoNotFound)
		return
	}
	if int(n) < len(st.pending) {
		setRet(stack, abi.ErrnoTooLarge)
		return
	}
	if len(st.pending) > 0 && !mem.Write(ptr, st.pending) {
		violate(fn, "range [%#x, +%d) is outside memory", ptr, len(st.pending))
	}
	setRet(stack, int32(len(st.pending)))
	st.pending, st.hasPending = nil, false
}

func hostLog(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncLog
	st := mustState(ctx, fn)
	level, ptr, n := int32(uint32(stack[0])), uint32(stack[1]), uint32(stack[2])
	checkRange(fn, mem, ptr, n)
	c := st.caps
	if c == nil || c.log == nil {
		st.denied(stack, abi.CapLog, denyNotGranted)
		return
	}
	if !c.log.allow() {
		c.logDropped.Add(1)
		st.dropped(abi.CapLog, denyRateLimited)
		setRet(stack, abi.ErrnoRateLimited)
		return
	}
	msg := guestBytes(fn, mem, ptr, min(n, maxLogBytes))
	var lvl slog.Level
	switch level {
	case abi.LogDebug:
		lvl = slog.LevelDebug
	case abi.LogInfo:
		lvl = slog.LevelInfo
	case abi.LogWarn:
		lvl = slog.LevelWarn
	case abi.LogError:
		lvl = slog.LevelError
	default:
		setRet(stack, abi.ErrnoInvalid)
		return
	}
	st.p.log.Log(ctx, lvl, string(msg), "source", "guest", "truncated", n > maxLogBytes)
	forwardLog(st, level, msg)
	setRet(stack, 0)
}

func hostNotify(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncNotify
	st := mustState(ctx, fn)
	kind, ptr, n := int32(uint32(stack[0])), uint32(stack[1]), uint32(stack[2])
	checkRange(fn, mem, ptr, n)
	c := st.caps
	if c == nil || !c.notify {
		st.denied(stack, abi.CapNotify, denyNotGranted)
		return
	}
	if n > maxPathBytes {
		setRet(stack, abi.ErrnoTooLarge)
		return
	}
	uri := string(guestBytes(fn, mem, ptr, n))
	switch kind {
	case abi.NotifyResourceUpdated:
		if !st.p.ownsURI(uri) {
			st.denied(stack, abi.CapNotify, denyForeignURI)
			return
		}
	case abi.NotifyResourcesListChanged, abi.NotifyPromptsListChanged, abi.NotifyToolsListChanged:
		if uri != "" {
			setRet(stack, abi.ErrnoInvalid)
			return
		}
	default:
		setRet(stack, abi.ErrnoInvalid)
		return
	}
	if !c.notifyRate.allow() {
		c.notifyDropped.Add(1)
		st.dropped(abi.CapNotify, denyRateLimited)
		setRet(stack, abi.ErrnoRateLimited)
		return
	}
	if !st.p.rt.enqueue(notification{plugin: st.p.name, kind: kind, uri: uri}) {
		c.notifyDropped.Add(1)
		st.dropped(abi.CapNotify, denyQueueFull)
		setRet(stack, abi.ErrnoRateLimited)
		return
	}
	setRet(stack, 0)
}

func hostConfigGet(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncConfigGet
	st := mustState(ctx, fn)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	checkRange(fn, mem, ptr, n)
	c := st.caps
	if c == nil || c.config == nil {
		st.denied(stack, abi.CapConfig, denyNotGranted)
		return
	}
	if n > maxKeyBytes {
		setRet(stack, abi.ErrnoTooLarge)
		return
	}
	v, ok := c.config[string(guestBytes(fn, mem, ptr, n))]
	if !ok {
		setRet(stack, abi.ErrnoNotFound)
		return
	}
	st.setOutput(stack, []byte(v))
}
