package catalog

// Sink receives the notifications a provider emits while it serves one
// request: progress and log messages that belong on that request's own
// stream. The protocol layer implements it (it knows the request's
// progressToken and log level) and passes it down in Request.Sink; the Set
// hands it to the provider in Call.Sink. The methods must be safe for
// concurrent use and may block briefly while the transport writes.
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
