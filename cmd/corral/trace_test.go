//go:build jaeger

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// jaeger is a running Jaeger (v1.76.0, built by interop/install-jaeger.sh):
// OTLP in on both protocols, its query API out, traces in memory.
type jaeger struct {
	otlpHTTP, otlpGRPC, query string
}

func startJaeger(t testing.TB) *jaeger {
	t.Helper()
	bin := os.Getenv("CORRAL_JAEGER")
	if bin == "" {
		bin = filepath.Join(repoRoot, "build", "tools", "jaeger")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("jaeger not found at %s (make test-traces builds it): %v", bin, err)
	}
	j := &jaeger{otlpHTTP: freeAddr(t), otlpGRPC: freeAddr(t), query: freeAddr(t)}
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, j.query, freeAddr(t), j.otlpGRPC, j.otlpHTTP)
	file := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", file)
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("jaeger log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + j.query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("jaeger's query API not up within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postRead sends a resources/read to s.
func postRead(s *wireServer, body string) error {
	req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": "test://static-text"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"contents"`) {
		return fmt.Errorf("read: %d %s", resp.StatusCode, answer)
	}
	return nil
}

// spansAt is corral's count of its sampled spans at stage (ended,
// exported, failed), from its /metrics.
func spansAt(t *testing.T, s *wireServer, stage string) int {
	t.Helper()
	resp, err := http.Get(s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	prefix := `corral_trace_spans_total{stage="` + stage + `"} `
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("/metrics: %q", line)
			}
			return n
		}
	}
	t.Fatalf("/metrics has no %s…", prefix)
	return 0
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []jaegerTag `json:"tags"`
	// Logs are the span's events: the event's name is the field "event".
	Logs []struct {
		Timestamp int64       `json:"timestamp"`
		Fields    []jaegerTag `json:"fields"`
	} `json:"logs"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// events returns the span's events, each as its fields by key (the
// event's name under "event").
func (s jaegerSpan) events() []map[string]any {
	var out []map[string]any
	for _, l := range s.Logs {
		m := map[string]any{}
		for _, f := range l.Fields {
			m[f.Key] = f.Value
		}
		out = append(out, m)
	}
	return out
}

// parent is the span id of the span's parent, "" for a root.
func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s jaegerSpan) tag(key string) (any, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

type jaegerTrace struct {
	TraceID string       `json:"traceID"`
	Spans   []jaegerSpan `json:"spans"`
}

// traces reads back the traces of service.
func (j *jaeger) traces(t *testing.T, service string) []jaegerTrace {
	t.Helper()
	resp, err := http.Get("http://" + j.query + "/api/traces?limit=1000&service=" + service)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Data []jaegerTrace `json:"data"`
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil // the service has sent nothing yet
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("jaeger /api/traces: %d %v: %s", resp.StatusCode, err, b)
	}
	return out.Data
}

const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
	// sampled: the client asks for its trace to be recorded.
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// TestTracesInJaeger sends requests carrying a client's traceparent (in
// params._meta and in the HTTP header) through bin/corral exporting to a
// real Jaeger over OTLP/HTTP and OTLP/gRPC, and reads the traces back: one
// trace per request, with the request, catalog and plugin spans (the
// plugin's with its instance wait and guest time, and under it one span
// per host call), linked to the client's span without taking
// its trace id; names only when trace.names is set; and with a sample
// ratio of 0 a sampled traceparent records nothing (issue 17, item 6).
func TestTracesInJaeger(t *testing.T) {
	j := startJaeger(t)
	tool := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"` + clientParent + `"}}}`
	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tt := range []struct {
		name, exporter, endpoint string
		ratio                    float64
		names                    bool
	}{
		{"otlp-http", "otlp-http", j.otlpHTTP, 1, true},
		{"otlp-grpc", "otlp-grpc", j.otlpGRPC, 1, false},
		{"ratio 0", "otlp-http", j.otlpHTTP, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			service := "corral-" + strings.ReplaceAll(tt.name, " ", "-")
			s := startWire(t, fmt.Sprintf(`  conformance:
    grants: {log: true}
trace:
  exporter: %s
  endpoint: %s
  insecure: true
  sampleRatio: %v
  names: %v
  serviceName: %s
`, tt.exporter, tt.endpoint, tt.ratio, tt.names, service), "conformance")
			for _, req := range []struct {
				body    string
				headers map[string]string
			}{
				{tool, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "test_tool_with_logging"}},
				{read, map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "test://static-text", "traceparent": clientParent}},
			} {
				h := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
				for k, v := range req.headers {
					h[k] = v
				}
				if a := answerOf(t, s.post(t, "", req.body, h)); a.Status != http.StatusOK || strings.Contains(a.Body, `"error"`) {
					t.Fatalf("request: %d %s", a.Status, a.Body)
				}
			}
			if tt.ratio == 0 {
				// Give the batcher (5 s) and Jaeger time to show anything.
				time.Sleep(7 * time.Second)
				if got := j.traces(t, service); len(got) != 0 {
					t.Fatalf("sample ratio 0 recorded %d traces: a client's sampled flag decided", len(got))
				}
				if n := spansAt(t, s, "ended"); n != 0 {
					t.Errorf("sample ratio 0 sampled %d spans", n)
				}
				return
			}
			var got []jaegerTrace
			deadline := time.Now().Add(30 * time.Second)
			for len(got) < 2 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
				got = j.traces(t, service)
			}
			if len(got) != 2 {
				t.Fatalf("%d traces, want one per request (2)", len(got))
			}
			for _, tr := range got {
				if tr.TraceID == clientTrace {
					t.Errorf("trace %s took the client's trace id", tr.TraceID)
				}
				// The request, catalog and plugin spans once each; the
				// tool logs three messages, each a host.log span under
				// plugin.call; the static read makes no host call.
				ops, hostSpans := map[string]jaegerSpan{}, []jaegerSpan{}
				for _, sp := range tr.Spans {
					if strings.HasPrefix(sp.OperationName, "host.") {
						hostSpans = append(hostSpans, sp)
						continue
					}
					if _, dup := ops[sp.OperationName]; dup {
						t.Errorf("two %s spans in one trace", sp.OperationName)
					}
					ops[sp.OperationName] = sp
				}
				_, isTool := ops["catalog.tool"]
				rootName := map[bool]string{true: "tools/call", false: "resources/read"}[isTool]
				if tt.names {
					rootName += map[bool]string{true: " test_tool_with_logging", false: " test://static-text"}[isTool]
				}
				root := ops[rootName]
				if root.SpanID == "" {
					t.Fatalf("no request span in %v", slices.Collect(maps.Keys(ops)))
				}
				want := []string{rootName, "catalog.read", "plugin.call"}
				hostCalls := 0
				if isTool {
					want[1], hostCalls = "catalog.tool", 3
				}
				if got := slices.Sorted(maps.Keys(ops)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
					t.Errorf("trace has spans %v, want one each of %v", got, want)
				}
				if ops[want[1]].parent() != root.SpanID || ops["plugin.call"].parent() != ops[want[1]].SpanID {
					t.Errorf("spans not nested request > %s > plugin.call", want[1])
				}
				call := ops["plugin.call"]
				for _, k := range []string{"corral.plugin.instance_wait_us", "corral.plugin.guest_us"} {
					if v, ok := call.tag(k); !ok || v.(float64) < 0 {
						t.Errorf("plugin.call's %s = %v", k, v)
					}
				}
				if len(call.Logs) != 0 {
					t.Errorf("plugin.call has events %v, want none (host calls are spans)", call.events())
				}
				if len(hostSpans) != hostCalls {
					t.Errorf("%d host-call spans, want one per host call (%d)", len(hostSpans), hostCalls)
				}
				for _, hs := range hostSpans {
					fn, _ := hs.tag("corral.host.function")
					outcome, _ := hs.tag("corral.host.outcome")
					if hs.OperationName != "host.log" || fn != "log" || outcome != "ok" || hs.parent() != call.SpanID {
						t.Errorf("host-call span %s (function %v, outcome %v, parent %s), want host.log, log, ok under plugin.call %s",
							hs.OperationName, fn, outcome, hs.parent(), call.SpanID)
					}
					for _, tag := range hs.Tags {
						if !slices.Contains([]string{"corral.host.function", "corral.host.outcome", "span.kind", "otel.scope.name", "otel.scope.version"}, tag.Key) {
							t.Errorf("host-call span carries %s = %v: only the function and outcome belong there", tag.Key, tag.Value)
						}
					}
				}
				linked := slices.ContainsFunc(root.References, func(r struct {
					RefType string `json:"refType"`
					TraceID string `json:"traceID"`
					SpanID  string `json:"spanID"`
				}) bool {
					return r.TraceID == clientTrace && r.SpanID == clientSpan
				})
				if !linked {
					t.Errorf("request span not linked to the client's span: %+v", root.References)
				}
				if v, _ := root.tag("mcp.method.name"); v != "tools/call" && v != "resources/read" {
					t.Errorf("mcp.method.name = %v", v)
				}
				_, uri := root.tag("mcp.resource.uri")
				_, name := root.tag("gen_ai.tool.name")
				if tt.names != (uri || name) {
					t.Errorf("trace.names %v, yet the URI or name recorded: %v %v", tt.names, uri, name)
				}
				if p, _ := ops["plugin.call"].tag("corral.plugin"); p != "conformance" {
					t.Errorf("plugin.call's corral.plugin = %v", p)
				}
				if e, _ := ops["plugin.call"].tag("corral.plugin.engine"); e != "wazero" {
					t.Errorf("plugin.call's engine = %v", e)
				}
			}

			// A burst of reads from 8 clients at once: every span reaches
			// Jaeger, and corral's own counts agree: none dropped, none
			// failed.
			const clients, each = 8, 50
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					for range each {
						if err := postRead(s, read); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			want := 6 + 3 + clients*each*3 // the tool's trace, the read's, the burst's
			spans := 0
			for deadline := time.Now().Add(30 * time.Second); spans != want && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
				spans = 0
				for _, tr := range j.traces(t, service) {
					spans += len(tr.Spans)
				}
			}
			if spans != want {
				t.Errorf("jaeger holds %d spans, want %d", spans, want)
			}
			for stage, n := range map[string]int{"ended": want, "exported": want, "failed": 0} {
				if got := spansAt(t, s, stage); got != n {
					t.Errorf("corral_trace_spans_total{stage=%q} = %d, want %d", stage, got, n)
				}
			}
		})
	}
}
