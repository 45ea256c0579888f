package mcp

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/corral-mcp/corral/host/trace"
)

var tracer = trace.NewTracer("github.com/corral-mcp/corral/host/mcp")

// rootOpts start every request span: a new root of kind server.
var rootOpts = []oteltrace.SpanStartOption{oteltrace.WithNewRoot(), oteltrace.WithSpanKind(oteltrace.SpanKindServer)}

// startSpan starts the span of one request: a new root, linked to the
// client's trace context if it sent one (params._meta's traceparent,
// else the HTTP header), so the client can neither choose corral's trace
// id nor its sampling. Attributes are set only on a recording span.
func (s *Server) startSpan(ctx context.Context, req Request, m *Message) (context.Context, oteltrace.Span) {
	opts := rootOpts[:len(rootOpts):len(rootOpts)] // a link appends to a copy
	var tp, ts string
	if m.p.Meta != nil {
		if m.p.Meta.TraceParent != nil {
			tp = *m.p.Meta.TraceParent
		}
		if m.p.Meta.TraceState != nil {
			ts = *m.p.Meta.TraceState
		}
	}
	if tp != "" || req.Header != nil {
		if l, ok := trace.Link(tp, ts, req.Header); ok {
			opts = append(opts, oteltrace.WithLinks(l))
		}
	}
	ctx, span := tracer.Start(ctx, m.Method, opts...)
	if !span.IsRecording() {
		return ctx, span
	}
	attrs := append(make([]attribute.KeyValue, 0, 3), trace.MethodName.String(m.Method), trace.RequestID.String(string(m.ID)))
	if m.Modern() && m.p.Meta != nil && m.p.Meta.ProtocolVersion != nil {
		attrs = append(attrs, trace.ProtocolVersion.String(*m.p.Meta.ProtocolVersion))
	} else if v := req.Session.legacyVersion(); v != "" {
		attrs = append(attrs, trace.ProtocolVersion.String(v))
	}
	span.SetAttributes(attrs...)
	if s.opts.TraceNames {
		switch m.Method {
		case "resources/read", "resources/subscribe", "resources/unsubscribe":
			span.SetAttributes(trace.ResourceURI.String(m.p.URI))
			span.SetName(m.Method + " " + m.p.URI)
		case "tools/call":
			span.SetAttributes(trace.ToolName.String(m.p.Name))
			span.SetName(m.Method + " " + m.p.Name)
		case "prompts/get":
			span.SetAttributes(trace.PromptName.String(m.p.Name))
			span.SetName(m.Method + " " + m.p.Name)
		}
	}
	return ctx, span
}

// endSpanError records a request's protocol error on its span: the code,
// never the message's data.
func endSpanError(span oteltrace.Span, err *Error) {
	if !span.IsRecording() {
		return
	}
	code := strconv.Itoa(err.Code)
	span.SetAttributes(trace.ErrorCode.Int(err.Code), trace.ErrorType.String(code))
	span.SetStatus(codes.Error, code)
}
