package plugin

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// TestCallSpan: a call into a plugin is one span, plugin.call, naming the
// plugin, engine and operation, and the error class unless it succeeded, with the wait for an instance and
// the guest's run as attributes, and each host call the guest made is a
// span of its own under it, host.FUNCTION, carrying the function and its
// outcome and nothing else (also a call that traps, whose status is an
// error); a call refused before any instance is sought has neither figure
// and no host-call span.
func TestCallSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{Grants: Grants{Log: true, KV: true}, Limits: Limits{MaxRequestBytes: 64}})

	type hostCall struct{ fn, outcome string }
	for _, tt := range []struct {
		name, req  string
		class      ErrorClass
		hostCalls  []hostCall // in order
		wait, ran  bool
		statusCode codes.Code
	}{
		{"log", "Lsecret words", ClassOK, []hostCall{{"log", "ok"}}, true, true, codes.Unset},
		{"kv", "kk=v", ClassOK, []hostCall{{"kv_set", "ok"}}, true, true, codes.Unset},
		{"kv missing", "gnope", ClassOK, []hostCall{{"kv_get", "not_found"}}, true, true, codes.Unset},
		{"not granted", "r/etc/passwd", ClassOK, []hostCall{{"file_read", "denied"}}, true, true, codes.Unset},
		{"trap in a host call", "X", ClassTrap, []hostCall{{"file_read", "trap"}}, true, true, codes.Error},
		{"request too large", "L" + string(make([]byte, 100)), ClassRequest, nil, false, false, codes.Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			_, _ = p.Call(context.Background(), catalog.Call{Op: abi.OpCallTool, Request: []byte(tt.req)})
			spans := rec.Ended()
			names := make([]string, len(spans))
			for i, s := range spans {
				names[i] = s.Name()
			}
			// Children end before their parent.
			if len(spans) != len(tt.hostCalls)+1 || spans[len(spans)-1].Name() != "plugin.call" {
				t.Fatalf("spans %v, want %d host-call spans, then plugin.call", names, len(tt.hostCalls))
			}
			sp := spans[len(spans)-1]
			attrs := attribute.NewSet(sp.Attributes()...)
			for k, want := range map[attribute.Key]string{
				"corral.plugin": "caps", "corral.plugin.engine": p.Engine(), "corral.plugin.op": abi.OpCallTool.String(),
			} {
				if v, _ := attrs.Value(k); v.AsString() != want {
					t.Errorf("%s = %q, want %q", k, v.AsString(), want)
				}
			}
			// The error class only when the call did not succeed.
			if v, ok := attrs.Value("corral.plugin.error_class"); ok != (tt.class != ClassOK) || ok && v.AsString() != string(tt.class) {
				t.Errorf("corral.plugin.error_class = %q (recorded %v) for class %q", v.AsString(), ok, tt.class)
			}
			_, wait := attrs.Value("corral.plugin.instance_wait_us")
			_, ran := attrs.Value("corral.plugin.guest_us")
			if wait != tt.wait || ran != tt.ran {
				t.Errorf("instance wait recorded %v, guest time %v; want %v, %v", wait, ran, tt.wait, tt.ran)
			}
			if sp.Status().Code != tt.statusCode {
				t.Errorf("status %v, want %v", sp.Status().Code, tt.statusCode)
			}
			if len(sp.Events()) != 0 {
				t.Errorf("plugin.call has %d events, want none", len(sp.Events()))
			}
			var got []hostCall
			for _, hs := range spans[:len(spans)-1] {
				ha := attribute.NewSet(hs.Attributes()...)
				fn, _ := ha.Value("corral.host.function")
				outcome, _ := ha.Value("corral.host.outcome")
				if hs.Name() != "host."+fn.AsString() || ha.Len() != 2 {
					t.Errorf("span %q with %v: want host.FUNCTION with the function and its outcome only", hs.Name(), hs.Attributes())
				}
				if hs.Parent().SpanID() != sp.SpanContext().SpanID() || hs.SpanContext().TraceID() != sp.SpanContext().TraceID() {
					t.Errorf("span %q is not a child of plugin.call", hs.Name())
				}
				if hs.StartTime().Before(sp.StartTime()) || hs.EndTime().After(sp.EndTime()) {
					t.Errorf("span %q from %v to %v, outside its parent", hs.Name(), hs.StartTime(), hs.EndTime())
				}
				if want := map[bool]codes.Code{true: codes.Error, false: codes.Unset}[outcome.AsString() == "trap"]; hs.Status().Code != want {
					t.Errorf("span %q status %v, want %v", hs.Name(), hs.Status().Code, want)
				}
				got = append(got, hostCall{fn.AsString(), outcome.AsString()})
			}
			if !slices.Equal(got, tt.hostCalls) {
				t.Errorf("host calls %v, want %v", got, tt.hostCalls)
			}
		})
	}
}
