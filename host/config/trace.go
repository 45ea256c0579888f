package config

// Trace configures OpenTelemetry traces (host/trace): off unless an
// exporter is named.
type Trace struct {
	// Exporter is "" (no traces), "otlp-http" or "otlp-grpc".
	Exporter string `koanf:"exporter"`
	// Endpoint is the collector's host:port (default: the OTLP port of
	// the exporter on localhost, 4318 for HTTP and 4317 for gRPC).
	Endpoint string `koanf:"endpoint"`
	// Insecure sends without TLS (a collector on loopback or a sidecar).
	Insecure bool `koanf:"insecure"`
	// SampleRatio is the share of requests traced, 0 to 1. It is
	// corral's own decision: a client's traceparent never changes it.
	SampleRatio float64 `koanf:"sampleRatio"`
	// Names records resource URIs and prompt and tool names in span
	// names and attributes; off, spans name only the method.
	Names bool `koanf:"names"`
	// ServiceName is service.name on every span.
	ServiceName string `koanf:"serviceName"`
}

// Trace exporters.
const (
	TraceOTLPHTTP = "otlp-http"
	TraceOTLPGRPC = "otlp-grpc"
)

// traceKeys are the schema keys of this file.
var traceKeys = []string{"trace.exporter", "trace.endpoint", "trace.insecure", "trace.sampleRatio", "trace.names", "trace.serviceName"}

func traceDefaults(m map[string]any) {
	m["trace.exporter"] = ""
	m["trace.endpoint"] = ""
	m["trace.insecure"] = false
	m["trace.sampleRatio"] = 1.0
	m["trace.names"] = false
	m["trace.serviceName"] = "corral"
}

// validateTrace checks the trace.* values.
func validateTrace(cfg *Config, bad func(key, format string, args ...any)) {
	t := &cfg.Trace
	switch t.Exporter {
	case "", TraceOTLPHTTP, TraceOTLPGRPC:
	default:
		bad("trace.exporter", "want %q, %q or \"\" (off), got %q", TraceOTLPHTTP, TraceOTLPGRPC, t.Exporter)
	}
	if t.SampleRatio < 0 || t.SampleRatio > 1 {
		bad("trace.sampleRatio", "must be between 0 and 1, got %v", t.SampleRatio)
	}
	if t.ServiceName == "" {
		bad("trace.serviceName", "must not be empty")
	}
}
