package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/corral-mcp/corral/host/config"
)

// traceQueueSpans is the batch span processor's queue. The processor
// exports on its one goroutine while the queue waits, and a span that
// finds the queue full is dropped; so the queue must hold the spans that
// end during the slowest export. Measured under BenchmarkTracing
// -tracing.files (8 clients, five spans a request, about 6,000 spans a
// second on two shared cores), an export of 512 spans to a collector on
// loopback took 18 ms on average and up to 68 ms: 400 spans, which the
// SDK's 2,048 holds. A collector across a network, or one pausing, takes
// longer, and a faster server ends more spans: 16,384 spans (about 10 MiB
// at the 600 bytes a queued span takes, BenchmarkSpan in host/trace) ride
// out a stall of 1.6 s at 10,000 spans a second. A longer outage still
// drops spans rather than making requests wait for the collector;
// corral_trace_spans_total counts them. OTEL_BSP_MAX_QUEUE_SIZE, when set,
// wins.
const traceQueueSpans = 16384

// tracing is the Part that exports traces (trace.exporter set): Start
// installs an OpenTelemetry TracerProvider as the global one, which the
// host packages start their spans from (host/trace); Stop flushes what
// is buffered and stops it, after the plugins are closed, and logs the
// spans that never reached the collector.
type tracing struct {
	cfg     config.Trace
	version string
	reg     prometheus.Registerer // nil: no metrics
	log     *slog.Logger
	tp      *sdktrace.TracerProvider
	counts  spanCounts
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
	var bsp []sdktrace.BatchSpanProcessorOption
	if os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" {
		bsp = append(bsp, sdktrace.WithMaxQueueSize(traceQueueSpans))
	}
	if t.reg != nil {
		for stage, n := range map[string]*atomic.Int64{"ended": &t.counts.ended, "exported": &t.counts.exported, "failed": &t.counts.failed} {
			err := t.reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "corral_trace_spans_total",
				Help:        "Sampled spans by stage: ended (handed to the exporter's queue), exported (accepted by the collector), failed (refused or unreachable). ended minus exported and failed is in the queue (at most 16,384 spans and a batch of 512) or was dropped.",
				ConstLabels: prometheus.Labels{"stage": stage},
			}, func() float64 { return float64(n.Load()) }))
			if err != nil {
				return fmt.Errorf("trace metrics: %w", err)
			}
		}
	}
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(&t.counts),
		sdktrace.WithBatcher(&countingExporter{exp, &t.counts}, bsp...),
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
	err := t.tp.Shutdown(ctx)
	if lost := t.counts.ended.Load() - t.counts.exported.Load(); lost > 0 && t.log != nil {
		t.log.Warn("tracing: spans did not reach the collector", "spans", lost, "ended", t.counts.ended.Load(),
			"failed", t.counts.failed.Load(), "dropped", lost-t.counts.failed.Load())
	}
	return err
}

// spanCounts counts the sampled spans that end, as a span processor
// registered beside the batch processor, and what became of them, from
// countingExporter: a span ended and neither exported nor failed is in
// the batch processor's queue or was dropped from it.
type spanCounts struct {
	ended, exported, failed atomic.Int64
}

func (c *spanCounts) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *spanCounts) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() { // what the batch processor queues
		c.ended.Add(1)
	}
}

func (c *spanCounts) Shutdown(context.Context) error   { return nil }
func (c *spanCounts) ForceFlush(context.Context) error { return nil }

// countingExporter is an exporter that counts what it exported and what
// failed.
type countingExporter struct {
	sdktrace.SpanExporter
	counts *spanCounts
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.counts.failed.Add(int64(len(spans)))
	} else {
		e.counts.exported.Add(int64(len(spans)))
	}
	return err
}

var _ Part = (*tracing)(nil)
