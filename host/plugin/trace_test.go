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
// plugin, engine, operation and outcome, with the wait for an instance and
// the guest's run as attributes, and each host call the guest made as an
// event carrying the function and its duration (also a call that traps);
// a call refused before any instance is sought has neither figure.
func TestCallSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{Grants: Grants{Log: true, KV: true}, Limits: Limits{MaxRequestBytes: 64}})

	for _, tt := range []struct {
		name, req  string
		class      ErrorClass
		events     []string // the host calls, in order
		wait, ran  bool
		statusCode codes.Code
	}{
		{"log", "Lsecret words", ClassOK, []string{"log"}, true, true, codes.Unset},
		{"kv", "kk=v", ClassOK, []string{"kv_set"}, true, true, codes.Unset},
		{"trap in a host call", "X", ClassTrap, []string{"file_read"}, true, true, codes.Error},
		{"request too large", "L" + string(make([]byte, 100)), ClassRequest, nil, false, false, codes.Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			_, _ = p.Call(context.Background(), catalog.Call{Op: abi.OpCallTool, Request: []byte(tt.req)})
			spans := rec.Ended()
			if len(spans) != 1 || spans[0].Name() != "plugin.call" {
				names := make([]string, len(spans))
				for i, s := range spans {
					names[i] = s.Name()
				}
				t.Fatalf("spans %v, want one plugin.call", names)
			}
			sp := spans[0]
			attrs := attribute.NewSet(sp.Attributes()...)
			for k, want := range map[attribute.Key]string{
				"corral.plugin": "caps", "corral.plugin.engine": p.Engine(),
				"corral.plugin.op": abi.OpCallTool.String(), "corral.plugin.error_class": string(tt.class),
			} {
				if v, _ := attrs.Value(k); v.AsString() != want {
					t.Errorf("%s = %q, want %q", k, v.AsString(), want)
				}
			}
			_, wait := attrs.Value("corral.plugin.instance_wait_us")
			_, ran := attrs.Value("corral.plugin.guest_us")
			if wait != tt.wait || ran != tt.ran {
				t.Errorf("instance wait recorded %v, guest time %v; want %v, %v", wait, ran, tt.wait, tt.ran)
			}
			if sp.Status().Code != tt.statusCode {
				t.Errorf("status %v, want %v", sp.Status().Code, tt.statusCode)
			}
			var got []string
			for _, ev := range sp.Events() {
				ea := attribute.NewSet(ev.Attributes...)
				fn, _ := ea.Value("corral.host.function")
				d, ok := ea.Value("corral.host.duration_us")
				if ev.Name != "host."+fn.AsString() || !ok || d.AsInt64() < 0 || ea.Len() != 2 {
					t.Errorf("event %q with %v: want host.FUNCTION with the function and its duration only", ev.Name, ev.Attributes)
				}
				if ev.Time.Before(sp.StartTime()) || ev.Time.After(sp.EndTime()) {
					t.Errorf("event %q at %v, outside its span", ev.Name, ev.Time)
				}
				got = append(got, fn.AsString())
			}
			if !slices.Equal(got, tt.events) {
				t.Errorf("host-call events %v, want %v", got, tt.events)
			}
		})
	}
}
