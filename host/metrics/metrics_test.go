package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEndpoints(t *testing.T) {
	m := New(Options{Build: BuildInfo{Version: "v1.2.3", Commit: "abc"}, PluginHistograms: 10})
	var notReady error = errors.New("plugins not loaded")
	h := NewHealth(func() error { return notReady })
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("GET /healthz", h.Healthz())
	mux.Handle("GET /readyz", h.Readyz(true))
	mux.Handle("GET /bare/readyz", h.Readyz(false))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if code, body := get(t, srv, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, srv, "/readyz"); code != 503 || !strings.Contains(body, "plugins not loaded") {
		t.Errorf("/readyz before load = %d %q, want 503", code, body)
	}
	if code, body := get(t, srv, "/bare/readyz"); code != 503 || body != "not ready\n" {
		t.Errorf("bare /readyz before load = %d %q, want 503 \"not ready\"", code, body)
	}
	notReady = nil
	if code, _ := get(t, srv, "/readyz"); code != 200 {
		t.Errorf("/readyz after load = %d, want 200", code)
	}
	h.SetDraining()
	if code, body := get(t, srv, "/readyz"); code != 503 || !strings.Contains(body, "draining") {
		t.Errorf("/readyz while draining = %d %q, want 503", code, body)
	}
	if code, body := get(t, srv, "/bare/readyz"); code != 503 || body != "not ready\n" {
		t.Errorf("bare /readyz while draining = %d %q, want 503 \"not ready\"", code, body)
	}

	m.Call("files", "read_resource", 2*time.Millisecond, "ok")
	m.Call("files", "read_resource", time.Millisecond, "timeout")
	m.Instance("files", true, "")
	m.Instance("files", true, "")
	m.Instance("files", false, "trap")
	m.Quarantine("issues", true)
	m.Denied("issues", "http", "host not granted")
	m.Reload(true, 10*time.Millisecond)
	m.Reload(false, 10*time.Millisecond)
	m.Plugins(3, 1)
	m.Admission(func() (int64, int64) { return 2, 7 })
	m.ListSkipped("files", "denied", false)

	code, body := get(t, srv, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`corral_build_info{commit="abc",goversion="`,
		`corral_plugin_calls_total{method="read_resource",plugin="files"} 2`,
		`corral_plugin_call_errors_total{class="timeout",method="read_resource",plugin="files"} 1`,
		`corral_plugin_call_duration_seconds_count{method="read_resource",plugin="files"} 2`,
		`corral_plugin_instances{plugin="files"} 1`,
		`corral_plugin_instance_discards_total{plugin="files",reason="trap"} 1`,
		`corral_plugin_quarantined{plugin="issues"} 1`,
		`corral_plugin_denied_total{capability="http",plugin="issues",reason="host not granted"} 1`,
		`corral_reloads_total{result="ok"} 1`,
		`corral_reloads_total{result="failed"} 1`,
		`corral_reload_last_success 0`,
		`corral_plugins_loaded 3`,
		`corral_plugins_failed 1`,
		`corral_http_requests_refused_total{reason="concurrency"} 2`,
		`corral_http_requests_refused_total{reason="body_timeout"} 7`,
		`corral_list_skipped_total{plugin="files",reason="denied",served="nothing"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestLastErrors(t *testing.T) {
	m := New(Options{})
	m.Call("p", "read", time.Millisecond, "ok")
	if got := m.LastErrors("p"); len(got) != 0 {
		t.Fatalf("a success was kept as an error: %v", got)
	}
	for _, class := range []string{"trap", "timeout", "guest_error", "trap", "timeout", "guest_error"} {
		m.Call("p", "read", time.Millisecond, class)
	}
	m.Rejected("p", "list")
	got := m.LastErrors("p")
	want := []string{"list bad_output", "read guest_error", "read timeout", "read trap", "read guest_error"}
	if len(got) != len(want) {
		t.Fatalf("kept %d errors, want %d: %v", len(got), len(want), got)
	}
	for i, e := range got {
		if e.Method+" "+e.Class != want[i] || e.Time.IsZero() {
			t.Errorf("error %d = %+v, want %s", i, e, want[i])
		}
	}
	if len(m.LastErrors("other")) != 0 {
		t.Error("another plugin has errors")
	}
}

// TestSeriesBounded: with 10,000 plugins called, the latency histograms
// keep series of their own for the first metrics.pluginHistograms plugins
// only and fold the rest into plugin="_other", so /metrics grows by a few
// counter lines per plugin (it grew by 60 histogram lines per plugin
// before), while every plugin's calls and call seconds stay countable.
func TestSeriesBounded(t *testing.T) {
	const plugins, own = 10_000, 100
	methods := []string{"read_resource", "get_prompt", "call_tool"}
	m := New(Options{PluginHistograms: own})
	for i := range plugins {
		p := fmt.Sprintf("plugin-%05d", i)
		for _, method := range methods {
			m.Call(p, method, time.Millisecond, "ok")
		}
		m.Instance(p, true, "")
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	code, body := get(t, srv, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}

	// One sample line per series; a histogram's are its buckets, _sum
	// and _count.
	series := map[string]int{}
	total := 0
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		series[name]++
		total++
	}
	histLines := 20 * (own + 1) * len(methods)
	if got := series["corral_plugin_call_duration_seconds"]; got != histLines {
		t.Errorf("latency histogram series = %d, want %d ((%d plugins + _other) × %d methods × 20)", got, histLines, own, len(methods))
	}
	if got, want := series["corral_plugin_calls_total"], plugins*len(methods); got != want {
		t.Errorf("call counters = %d, want one per plugin and method (%d)", got, want)
	}
	if got := series["corral_plugin_call_seconds_total"]; got != plugins {
		t.Errorf("call-seconds counters = %d, want one per plugin (%d)", got, plugins)
	}
	// Per plugin: its 3 call counters, its call seconds and its instance
	// gauge; everything else is a constant.
	if limit := plugins*(len(methods)+2) + histLines + 200; total > limit {
		t.Errorf("%d series for %d plugins, want at most %d", total, plugins, limit)
	}
	if perPlugin := len(body) / plugins; perPlugin > 450 {
		t.Errorf("/metrics is %d bytes, %d per plugin; want at most 450", len(body), perPlugin)
	}
	t.Logf("/metrics: %d bytes, %d series for %d plugins", len(body), total, plugins)

	for _, tc := range []struct {
		line string
		want bool
	}{
		{`corral_plugin_call_duration_seconds_count{method="call_tool",plugin="plugin-00099"} 1`, true},
		{`corral_plugin_call_duration_seconds_count{method="call_tool",plugin="plugin-00100"}`, false},
		{fmt.Sprintf(`corral_plugin_call_duration_seconds_count{method="call_tool",plugin="_other"} %d`, plugins-own), true},
		{`corral_plugin_calls_total{method="call_tool",plugin="plugin-09999"} 1`, true},
		{`corral_plugin_call_seconds_total{plugin="plugin-09999"} 0.003`, true},
	} {
		if strings.Contains(body, tc.line) != tc.want {
			t.Errorf("/metrics has %q: %v, want %v", tc.line, !tc.want, tc.want)
		}
	}
}

// TestNoPluginHistograms: metrics.pluginHistograms 0 observes every call
// under plugin="_other".
func TestNoPluginHistograms(t *testing.T) {
	m := New(Options{})
	m.Call("a", "read_resource", time.Millisecond, "ok")
	m.Call("b", "read_resource", time.Millisecond, "trap")
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	_, body := get(t, srv, "/metrics")
	if !strings.Contains(body, `corral_plugin_call_duration_seconds_count{method="read_resource",plugin="_other"} 2`) ||
		strings.Contains(body, `corral_plugin_call_duration_seconds_count{method="read_resource",plugin="a"}`) {
		t.Errorf("want both calls under _other only:\n%s", body)
	}
}
