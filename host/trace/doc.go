// Package trace sets up corral's OpenTelemetry traces and holds what the
// traced packages share: the names of the spans' attributes and the
// reading of a client's trace context.
//
// Tracing is off unless the configuration names an OTLP exporter
// (trace.exporter: otlp-http or otlp-grpc); then the server (cmd/corral)
// installs a TracerProvider as the OpenTelemetry global, which host/mcp,
// host/catalog and host/plugin start their spans from through [NewTracer]
// (while tracing is off the global's no-op tracer still wraps the context
// once a span: about 2 % of a static read's server CPU by the profile of
// BenchmarkTracing). This package imports the OpenTelemetry API only.
//
// A client is untrusted: its traceparent (in params._meta or the HTTP
// header) links corral's trace to the client's, and is never the parent.
// Every request starts a new root with a trace id of corral's own, and
// the configured ratio alone decides sampling, so no sampled flag or
// chosen trace id can make corral trace more. Spans carry the method,
// the plugin, the engine and figures; resource URIs and prompt and tool
// names only when trace.names is set; never arguments, content or tokens.
package trace
