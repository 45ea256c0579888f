package plugin

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/metrics"
)

// deniedMetrics forwards denials to corral's real metrics.
type deniedMetrics struct {
	nopObserver
	m *metrics.Metrics
}

func (o deniedMetrics) Denied(plugin, capability, reason string) {
	o.m.Denied(plugin, capability, reason)
}

// deniedSeries returns the series of corral_plugin_denied_total that
// /metrics serves, as their label sets.
func deniedSeries(t *testing.T, m *metrics.Metrics) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	var out []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "corral_plugin_denied_total{"); ok {
			labels, _, _ := strings.Cut(rest, "}")
			out = append(out, labels)
		}
	}
	return out
}

// TestDeniedLabelsBounded: a plugin fetching thousands of distinct
// ungranted hosts and schemes leaves the denied metric with one series
// per reason, none naming what the guest asked for. Before, every host
// and scheme became a label value of its own, never freed.
func TestDeniedLabelsBounded(t *testing.T) {
	m := metrics.New(metrics.Options{})
	rt, err := NewRuntime(context.Background(), RuntimeConfig{Engine: kitEngine, Observer: deniedMetrics{m: m}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	e := &env{rt: rt}
	p := e.load(t, "caps", Config{PoolSize: 1, Grants: Grants{HTTPHosts: []string{"granted.example"}}})

	fetch := func(from, to int) {
		for i := from; i < to; i++ {
			for _, u := range []string{fmt.Sprintf("http://h%d.attacker.example/", i), fmt.Sprintf("s%d://x/", i)} {
				if r := callCaps(t, p, httpReq(u)); r.N >= 0 {
					t.Fatalf("%s: n = %d, want denied", u, r.N)
				}
			}
		}
	}
	fetch(0, 10)
	first := deniedSeries(t, m)
	fetch(10, 2000)
	after := deniedSeries(t, m)
	if len(first) != 2 || len(after) != len(first) {
		t.Fatalf("series after 20 denials: %q; after 4000: %d series, want 2 throughout", first, len(after))
	}
	known := map[string]bool{}
	for _, r := range denyReasons {
		known[`capability="http",plugin="caps",reason="`+string(r)+`"`] = true
	}
	for _, s := range after {
		if !known[s] || strings.Contains(s, "attacker") {
			t.Errorf("series %q does not carry one of the fixed reasons", s)
		}
	}
}
