package console_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/console"
	"github.com/corral-mcp/corral/host/metrics"
)

// TestLatencyPastHistogramLimit: with metrics.pluginHistograms 1, the
// first plugin called shows its mean and p95, the second its mean (from
// its counters) and no p95, on the overview and on its own page.
func TestLatencyPastHistogramLimit(t *testing.T) {
	var ps []catalog.Provider
	for _, name := range []string{"early", "late"} {
		ps = append(ps, &catalogtest.Provider{M: abi.Manifest{Name: name, Version: "1", ABI: abi.Major, Schemes: []string{name}}})
	}
	set, err := catalog.NewSet(ps, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Options{PluginHistograms: 1})
	m.Call("early", "read_resource", 2*time.Millisecond, "ok")
	m.Call("late", "read_resource", 4*time.Millisecond, "ok")
	m.Call("late", "read_resource", 6*time.Millisecond, "ok")
	h := console.New(console.Options{Registry: fixed{cat: catalog.New(set), cfg: cfg}, Metrics: m,
		Principal: func(*http.Request) abi.Principal { return abi.Principal{ID: "ops"} }})

	overview := bodyOf(t, serve(t, h, "GET", console.Prefix, nil))
	for _, tc := range []struct{ plugin, mean, p95 string }{
		{"early", "2ms", "2.5ms"},
		{"late", "5ms", "–"},
	} {
		row := regexp.MustCompile(`(?s)<tr data-plugin="` + tc.plugin + `">.*?</tr>`).FindString(overview)
		cells := regexp.MustCompile(`<td>([^<]*)</td>`).FindAllStringSubmatch(row, -1)
		if len(cells) < 6 {
			t.Fatalf("%s: row %q", tc.plugin, row)
		}
		// Cells without markup: version, claims, instances, calls/s, mean, p95, errors.
		if got := []string{cells[4][1], cells[5][1]}; got[0] != tc.mean || got[1] != tc.p95 {
			t.Errorf("%s: mean, p95 = %q, want %q, %q", tc.plugin, got, tc.mean, tc.p95)
		}
	}
	for plugin, want := range map[string]string{
		"early": "mean 2ms, p95 ≤ 2.5ms",
		"late":  "mean 5ms, p95 not kept",
	} {
		page := bodyOf(t, serve(t, h, "GET", console.Prefix+"plugin/"+plugin, nil))
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(page) {
			t.Errorf("%s's page lacks %q", plugin, want)
		}
	}
}
