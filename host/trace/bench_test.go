package trace

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// discard is an exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

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

// BenchmarkExport is what the OTLP/HTTP exporter costs a span: batches of
// 512 spans encoded and posted to a loopback server that reads and
// discards them, spans with a plugin.call's six attributes and with none;
// the figure is per span, the exporter's side and the loopback server's
// together. The difference is what attributes cost to export.
//
//	go test -run '^$' -bench '^BenchmarkExport$' -benchmem ./host/trace
func BenchmarkExport(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(strings.TrimPrefix(sink.URL, "http://")), otlptracehttp.WithInsecure())
	if err != nil {
		b.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	for _, tt := range []struct {
		name  string
		attrs []attribute.KeyValue
	}{
		{"six attributes", []attribute.KeyValue{Plugin.String("conformance"), Engine.String("wazero"), Op.String("read_resource"),
			ErrorClass.String("trap"), InstanceWait.Int64(3), GuestTime.Int64(41)}},
		{"no attribute", nil},
	} {
		rec := tracetest.NewSpanRecorder()
		tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("bench")
		const batch = 512
		for range batch {
			_, sp := tr.Start(context.Background(), "plugin.call", oteltrace.WithAttributes(tt.attrs...))
			sp.End()
		}
		spans := rec.Ended()
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.ExportSpans(context.Background(), spans); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/span")
		})
	}
}
