package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/corral-mcp/corral/host/config"
)

// tracing is the Part that exports traces (trace.exporter set): Start
// installs an OpenTelemetry TracerProvider as the global one, which the
// host packages start their spans from (host/trace); Stop flushes what
// is buffered and stops it, after the plugins are closed.
type tracing struct {
	cfg     config.Trace
	version string
	tp      *sdktrace.TracerProvider
}

func (t *tracing) Name() string { return "tracing" }

func (t *tracing) Start(ctx context.Context) error {
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch t.cfg.Exporter {
	case config.TraceOTLPHTTP:
		var opts []otlptracehttp.Option
		if t.cfg.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpoint(t.cfg.Endpoint))
		}
		if t.cfg.Insecure {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case config.TraceOTLPGRPC:
		var opts []otlptracegrpc.Option
		if t.cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpoint(t.cfg.Endpoint))
		}
		if t.cfg.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return fmt.Errorf("unknown exporter %q", t.cfg.Exporter)
	}
	if err != nil {
		return fmt.Errorf("%s exporter: %w", t.cfg.Exporter, err)
	}
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", t.cfg.ServiceName), attribute.String("service.version", t.version))),
		// Every request span is a new root of corral's own (host/mcp), so
		// the ratio of corral's trace ids decides; children follow it.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(t.cfg.SampleRatio))),
	)
	otel.SetTracerProvider(t.tp)
	return nil
}

func (t *tracing) Stop(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

var _ Part = (*tracing)(nil)
