package catalog

import "context"

// Sink receives the notifications a provider emits while it serves one
// request: progress and log messages that belong on that request's own
// stream. The protocol layer implements it (it knows the request's
// progressToken and log level) and passes it down through the request's
// context with [WithSink]; a provider finds it with [SinkFrom]. The
// methods must be safe for concurrent use and may block briefly while the
// transport writes.
type Sink interface {
	// Progress reports progress (and total, 0 when unknown) with an
	// optional message. It returns false when the request asked for no
	// progress (no progressToken) or the value did not increase, in which
	// case nothing was sent.
	Progress(progress, total float64, message string) bool
	// Log forwards a log message at an MCP level ("debug", "info",
	// "warning", "error") from logger (the provider's name). It returns
	// false when the request's log level filtered it out.
	Log(level, logger, message string) bool
}

type sinkKey struct{}

// WithSink returns ctx carrying s for the providers that serve the request.
func WithSink(ctx context.Context, s Sink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

// SinkFrom returns the request's Sink, or nil when the request has none.
func SinkFrom(ctx context.Context) Sink {
	s, _ := ctx.Value(sinkKey{}).(Sink)
	return s
}
