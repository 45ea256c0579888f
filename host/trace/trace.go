package trace

import (
	"context"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Attribute keys of corral's spans: the OpenTelemetry semantic
// conventions for MCP where they exist, corral.* for the rest.
const (
	MethodName      = attribute.Key("mcp.method.name")
	ProtocolVersion = attribute.Key("mcp.protocol.version")
	ResourceURI     = attribute.Key("mcp.resource.uri")   // only with trace.names
	ToolName        = attribute.Key("gen_ai.tool.name")   // only with trace.names
	PromptName      = attribute.Key("gen_ai.prompt.name") // only with trace.names
	RequestID       = attribute.Key("jsonrpc.request.id")
	ErrorCode       = attribute.Key("rpc.jsonrpc.error_code")
	ErrorType       = attribute.Key("error.type")
	Plugin          = attribute.Key("corral.plugin")
	Op              = attribute.Key("corral.plugin.op")
	Engine          = attribute.Key("corral.plugin.engine")
	ErrorClass      = attribute.Key("corral.plugin.error_class")
	InstanceWait    = attribute.Key("corral.plugin.instance_wait_us") // the wait for a pooled instance, µs
	GuestTime       = attribute.Key("corral.plugin.guest_us")         // the guest's run, µs
	HostFunc        = attribute.Key("corral.host.function")
	HostOutcome     = attribute.Key("corral.host.outcome") // ok, the errno's name (denied, not_found, …) or trap
)

// Tracer starts spans from the global TracerProvider as it is when each
// span starts: the no-op one until the server installs its own, and
// whichever a test installs later (a tracer taken from the global once
// stays bound to the first provider ever installed).
type Tracer struct {
	name string
	cur  atomic.Pointer[bound]
}

type bound struct {
	tp oteltrace.TracerProvider
	t  oteltrace.Tracer
}

// NewTracer returns the Tracer of the named instrumentation scope.
func NewTracer(name string) *Tracer { return &Tracer{name: name} }

// Start starts a span; see [oteltrace.Tracer].
func (t *Tracer) Start(ctx context.Context, name string, opts ...oteltrace.SpanStartOption) (context.Context, oteltrace.Span) {
	tp := otel.GetTracerProvider()
	b := t.cur.Load()
	if b == nil || b.tp != tp {
		b = &bound{tp: tp, t: tp.Tracer(t.name)}
		t.cur.Store(b)
	}
	return b.t.Start(ctx, name, opts...)
}

// Link reads a client's trace context, from traceparent and tracestate
// (params._meta's, else the HTTP headers'), as a link for a new root
// span; ok is false when there is none or it does not parse.
func Link(traceparent, tracestate string, h http.Header) (oteltrace.Link, bool) {
	carrier := propagation.MapCarrier{}
	switch {
	case traceparent != "":
		carrier["traceparent"] = traceparent
		if tracestate != "" {
			carrier["tracestate"] = tracestate
		}
	case h != nil && h.Get("traceparent") != "":
		carrier["traceparent"] = h.Get("traceparent")
		if ts := h.Get("tracestate"); ts != "" {
			carrier["tracestate"] = ts
		}
	default:
		return oteltrace.Link{}, false
	}
	sc := oteltrace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		return oteltrace.Link{}, false
	}
	return oteltrace.Link{SpanContext: sc}, true
}
