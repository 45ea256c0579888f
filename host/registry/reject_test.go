package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/plugin"
)

// metricsObserver feeds the plugin runtime's events to metrics, as the
// server does.
type metricsObserver struct{ m *metrics.Metrics }

func (o metricsObserver) Call(p, op string, d time.Duration, c plugin.ErrorClass) {
	o.m.Call(p, op, d, string(c))
}
func (o metricsObserver) Instance(p string, created bool, reason string) {
	o.m.Instance(p, created, reason)
}
func (o metricsObserver) Quarantine(p string, on bool)        { o.m.Quarantine(p, on) }
func (o metricsObserver) Denied(p, capability, reason string) { o.m.Denied(p, capability, reason) }
func (o metricsObserver) Rejected(p, op string)               { o.m.Rejected(p, op) }

// copyFixture copies testdata/wat/<name>.wasm into dir.
func copyFixture(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".wasm"), watFixture(t, name), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scrape returns the metrics exposition.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestRejectedOutputQuarantines serves a plugin whose every answer the
// catalog refuses (a blob that is not base64) through the real registry
// and wazero. Each refusal reaches the plugin through the registry's
// wrapper: it counts in corral_plugin_call_errors_total as bad_output and
// toward quarantine, and after limits.quarantineAfter of them the plugin
// is quarantined. (The wrapper once dropped the report: the plugin was
// never quarantined and the metric stayed 0.)
func TestRejectedOutputQuarantines(t *testing.T) {
	ctx := context.Background()
	m := metrics.New(metrics.Options{})
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{Observer: metricsObserver{m}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	copyFixture(t, dir, "badb64")
	r := start(t, dir, WasmLoader(rt), nil, nil)
	set := r.Catalog().Current()
	threshold := config.DefaultPlugin().Limits.QuarantineAfter

	for i := range threshold {
		_, err := set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, "badb64://x")
		ce := catalog.AsError(err)
		if ce == nil || ce.Kind != catalog.KindInternal || ce.Plugin != "badb64" || ce.Message != "the plugin returned invalid output" {
			t.Fatalf("read %d: %v, want invalid output from badb64", i, err)
		}
	}
	_, err = set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, "badb64://x")
	if !errors.Is(err, plugin.ErrQuarantined) {
		t.Errorf("read after %d rejected outputs: %v, want the plugin quarantined", threshold, err)
	}
	body := scrape(t, m)
	for _, want := range []string{
		fmt.Sprintf(`corral_plugin_call_errors_total{class="bad_output",method="read_resource",plugin="badb64"} %d`, threshold),
		`corral_plugin_quarantined{plugin="badb64"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
