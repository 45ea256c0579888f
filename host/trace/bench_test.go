package trace

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// discard is an exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                           { return nil }

// BenchmarkSpan is what one span costs the OpenTelemetry SDK on this
// machine: the start and end of a child span with two attributes (a host
// call's span: a precomputed start option, one attribute at the end),
// with no processor, with the batch processor over an exporter that
// discards, and the start alone. The figures are the floor of tracing's
// cost per span that corral cannot remove (docs/tracing.md#cost).
//
//	go test -run '^$' -bench '^BenchmarkSpan$' -benchmem ./host/trace
func BenchmarkSpan(b *testing.B) {
	start := []oteltrace.SpanStartOption{oteltrace.WithAttributes(attribute.String("corral.host.function", "file_read"))}
	end := attribute.String("corral.host.outcome", "ok")
	for _, tt := range []struct {
		name string
		opts []sdktrace.TracerProviderOption
	}{
		{"no processor", nil},
		{"batch processor", []sdktrace.TracerProviderOption{sdktrace.WithBatcher(discard{})}},
	} {
		tp := sdktrace.NewTracerProvider(append(tt.opts, sdktrace.WithSampler(sdktrace.AlwaysSample()))...)
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		tr := tp.Tracer("bench")
		parent, root := tr.Start(context.Background(), "plugin.call")
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, sp := tr.Start(parent, "host.file_read", start...)
				sp.SetAttributes(end)
				sp.End()
			}
		})
		b.Run(tt.name+"/start only", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tr.Start(parent, "host.file_read", start...)
			}
		})
		root.End()
	}
}
