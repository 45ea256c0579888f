package mcp

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// record installs a provider sampling ratio of corral's trace ids, the
// server's configuration, and returns what it records.
func record(t *testing.T, ratio float64) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)))))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	return rec
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

func TestRequestSpans(t *testing.T) {
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://static-text","_meta":{"traceparent":"` + clientParent + `",` + modernMeta[len(`"_meta":{`):] + `}}`)
	header := http.Header{"Traceparent": {clientParent}}
	plain := []byte(`{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"test://static-text",` + modernMeta + `}}`)
	for _, tt := range []struct {
		name   string
		ratio  float64
		names  bool
		msg    []byte
		header http.Header
	}{
		{"meta, names", 1, true, read, nil},
		{"header, no names", 1, false, plain, header},
		{"sampled client, ratio 0", 0, true, read, header},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := record(t, tt.ratio)
			s := NewServer(catalog.New(set), Options{Version: "test", TraceNames: tt.names})
			if r := s.ServeBytes(context.Background(), Request{Header: tt.header}, tt.msg); r.Err != nil {
				t.Fatalf("read: %s", r.Msg)
			}
			spans := rec.Ended()
			if tt.ratio == 0 {
				if len(spans) != 0 {
					t.Fatalf("ratio 0 recorded %d spans: the client's sampled flag decided", len(spans))
				}
				return
			}
			var req sdktrace.ReadOnlySpan
			for _, sp := range spans {
				if !sp.Parent().IsValid() {
					req = sp
				}
			}
			if req == nil {
				t.Fatalf("no root span among %d", len(spans))
			}
			if req.SpanContext().TraceID().String() == clientTrace {
				t.Error("the request span took the client's trace id")
			}
			if l := req.Links(); len(l) != 1 || l[0].SpanContext.TraceID().String() != clientTrace || l[0].SpanContext.SpanID().String() != clientSpan {
				t.Errorf("links %+v, want the client's span", l)
			}
			wantName, uri := "resources/read", false
			if tt.names {
				wantName = "resources/read test://static-text"
			}
			for _, a := range req.Attributes() {
				uri = uri || a.Key == "mcp.resource.uri"
			}
			if req.Name() != wantName || uri != tt.names {
				t.Errorf("span %q (URI recorded: %v), want %q with names %v", req.Name(), uri, wantName, tt.names)
			}
			var catalogSpan bool
			for _, sp := range spans {
				catalogSpan = catalogSpan || (sp.Name() == "catalog.read" && sp.Parent().SpanID() == req.SpanContext().SpanID())
			}
			if !catalogSpan {
				t.Error("no catalog.read span under the request span")
			}
		})
	}
}
