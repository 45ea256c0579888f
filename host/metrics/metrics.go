package metrics

import (
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// BuildInfo labels corral_build_info.
type BuildInfo struct {
	Version string
	Commit  string
}

// Options configure [New].
type Options struct {
	Build BuildInfo
	// PluginHistograms is how many plugins get latency histograms of
	// their own (config metrics.pluginHistograms): the first that many
	// distinct plugins called, in order of their first call. Every other
	// plugin's calls are observed under the plugin label [OtherPlugin],
	// so that the histogram series stay bounded however many plugins
	// serve; the per-plugin counters (calls, errors, call seconds) are
	// kept for every plugin. 0 gives no plugin a histogram of its own.
	PluginHistograms int
}

// OtherPlugin is the plugin label of the latency histograms of every
// plugin past [Options.PluginHistograms]. A plugin name cannot start with
// "_", so it never names a plugin.
const OtherPlugin = "_other"

// Metrics holds corral's collectors. Its methods are safe for concurrent
// use and never block.
type Metrics struct {
	reg *prometheus.Registry

	calls       *prometheus.CounterVec
	callSeconds *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	// histograms are the plugins whose latency has series of its own,
	// at most histogramLimit of them.
	histograms     sync.Map // plugin name -> struct{}
	histogramsFull atomic.Bool
	histogramMu    sync.Mutex
	histogramCount int
	histogramLimit int
	instances      *prometheus.GaugeVec
	discards       *prometheus.CounterVec
	quarantined    *prometheus.GaugeVec
	denied         *prometheus.CounterVec
	listSkipped    *prometheus.CounterVec

	reloads        *prometheus.CounterVec
	reloadOK       prometheus.Gauge
	reloadTime     prometheus.Gauge
	reloadDuration prometheus.Histogram
	serving        prometheus.Gauge
	failed         prometheus.Gauge

	mu   sync.Mutex
	last map[string][]CallError // plugin -> its latest failed calls, newest first
}

// lastErrors is how many failed calls LastErrors keeps per plugin.
const lastErrors = 5

// CallError is one failed plugin call: when, which method, and the
// runtime's error class. It holds nothing a client sent.
type CallError struct {
	Time   time.Time
	Method string
	Class  string
}

// New returns Metrics registered on a new registry, together with the Go
// runtime and process collectors.
func New(o Options) *Metrics {
	info := o.Build
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg:            reg,
		histogramLimit: o.PluginHistograms,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_plugin_calls_total", Help: "Calls into plugins, by plugin and method.",
		}, []string{"plugin", "method"}),
		callSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_plugin_call_seconds_total", Help: "Time spent in plugin calls, by plugin (divided by the plugin's calls: its mean latency).",
		}, []string{"plugin"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_plugin_call_errors_total", Help: "Plugin calls that did not succeed, by plugin, method and class (guest_error, trap, timeout, …).",
		}, []string{"plugin", "method", "class"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corral_plugin_call_duration_seconds",
			Help:    "Latency of plugin calls, by plugin and method, for the first metrics.pluginHistograms plugins called; every other plugin's calls are under plugin=\"_other\".",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"plugin", "method"}),
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_plugin_instances", Help: "Live Wasm instances (pool size), by plugin.",
		}, []string{"plugin"}),
		discards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_plugin_instance_discards_total", Help: "Instances discarded, by plugin and reason.",
		}, []string{"plugin", "reason"}),
		quarantined: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_plugin_quarantined", Help: "1 while a plugin is quarantined.",
		}, []string{"plugin"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_plugin_denied_total", Help: "Host calls refused or dropped, by plugin, capability and reason (a fixed set).",
		}, []string{"plugin", "capability", "reason"}),
		listSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_list_skipped_total",
			Help: "Plugin pages a resources/list left out or served from the last good page, by plugin, reason (failed, error, denied, invalid) and served (last_good_page, nothing).",
		}, []string{"plugin", "reason", "served"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_reloads_total", Help: "Attempts to change the served plugin set, by result (ok, failed).",
		}, []string{"result"}),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "corral_reload_last_success", Help: "1 if the last reload applied every change, else 0.",
		}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "corral_reload_last_timestamp_seconds", Help: "Unix time of the last reload attempt.",
		}),
		reloadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "corral_reload_duration_seconds", Help: "Time to compile, load and swap a plugin set.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
		}),
		serving: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "corral_plugins_loaded", Help: "Plugins in the served set.",
		}),
		failed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "corral_plugins_failed", Help: "Plugin files whose current content failed to load.",
		}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "corral_build_info", Help: "Build information; the value is 1.",
		ConstLabels: prometheus.Labels{"version": info.Version, "commit": info.Commit, "goversion": runtime.Version()},
	})
	build.Set(1)
	reg.MustRegister(m.calls, m.callSeconds, m.errors, m.latency, m.instances, m.discards, m.quarantined, m.denied, m.listSkipped,
		m.reloads, m.reloadOK, m.reloadTime, m.reloadDuration, m.serving, m.failed, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the collectors are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Call records one plugin call. class is "ok" for a success, else the
// runtime's error class.
func (m *Metrics) Call(plugin, method string, d time.Duration, class string) {
	m.calls.WithLabelValues(plugin, method).Inc()
	m.callSeconds.WithLabelValues(plugin).Add(d.Seconds())
	m.latency.WithLabelValues(m.histogramLabel(plugin), method).Observe(d.Seconds())
	if class != "ok" {
		m.errors.WithLabelValues(plugin, method, class).Inc()
		m.lastError(plugin, method, class)
	}
}

// histogramLabel is the plugin label plugin's latency is observed under:
// its own name while it is among the first histogramLimit plugins called,
// else OtherPlugin.
func (m *Metrics) histogramLabel(plugin string) string {
	if _, ok := m.histograms.Load(plugin); ok {
		return plugin
	}
	if m.histogramsFull.Load() {
		return OtherPlugin
	}
	m.histogramMu.Lock()
	defer m.histogramMu.Unlock()
	if _, ok := m.histograms.Load(plugin); ok {
		return plugin
	}
	if m.histogramCount >= m.histogramLimit {
		m.histogramsFull.Store(true)
		return OtherPlugin
	}
	m.histogramCount++
	m.histograms.Store(plugin, struct{}{})
	return plugin
}

func (m *Metrics) lastError(plugin, method, class string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[string][]CallError{}
	}
	l := append([]CallError{{Time: time.Now(), Method: method, Class: class}}, m.last[plugin]...)
	m.last[plugin] = l[:min(len(l), lastErrors)]
}

// LastErrors returns plugin's latest failed calls (at most five), newest
// first, for the operator console.
func (m *Metrics) LastErrors(plugin string) []CallError {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.last[plugin])
}

// Rejected records a call whose output the catalog refused as invalid: an
// error of class bad_output for a call already counted.
func (m *Metrics) Rejected(plugin, method string) {
	m.errors.WithLabelValues(plugin, method, "bad_output").Inc()
	m.lastError(plugin, method, "bad_output")
}

// ListSkipped records a plugin's page a list could not use: why (one of
// catalog's Skip* reasons) and whether the plugin's last good page was
// served in its place.
func (m *Metrics) ListSkipped(plugin, reason string, cached bool) {
	served := "nothing"
	if cached {
		served = "last_good_page"
	}
	m.listSkipped.WithLabelValues(plugin, reason, served).Inc()
}

// Instance records an instance created or discarded (with the reason).
func (m *Metrics) Instance(plugin string, created bool, reason string) {
	if created {
		m.instances.WithLabelValues(plugin).Inc()
		return
	}
	m.instances.WithLabelValues(plugin).Dec()
	m.discards.WithLabelValues(plugin, reason).Inc()
}

// Quarantine records a plugin entering (on) or leaving quarantine.
func (m *Metrics) Quarantine(plugin string, on bool) {
	v := 0.0
	if on {
		v = 1
	}
	m.quarantined.WithLabelValues(plugin).Set(v)
}

// Denied records a refused host call.
func (m *Metrics) Denied(plugin, capability, reason string) {
	m.denied.WithLabelValues(plugin, capability, reason).Inc()
}

// Reload records an attempt to change the served set (registry.Observer).
func (m *Metrics) Reload(ok bool, d time.Duration) {
	result, v := "failed", 0.0
	if ok {
		result, v = "ok", 1
	}
	m.reloads.WithLabelValues(result).Inc()
	m.reloadOK.Set(v)
	m.reloadTime.Set(float64(time.Now().UnixNano()) / 1e9)
	m.reloadDuration.Observe(d.Seconds())
}

// Plugins records how many plugins serve and how many files fail to load
// (registry.Observer).
func (m *Metrics) Plugins(serving, failed int) {
	m.serving.Set(float64(serving))
	m.failed.Set(float64(failed))
}

// Sessions exports the HTTP transport's legacy session figures, read from
// stats at every scrape: corral_sessions (live sessions),
// corral_sessions_evicted_total (ended because their client opened one
// over its quota) and corral_sessions_refused_total (refused because every
// slot was in use). Call it once.
func (m *Metrics) Sessions(stats func() (open int, evicted, refused int64)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "corral_sessions", Help: "Live legacy (2025-11-25) HTTP sessions.",
		}, func() float64 { open, _, _ := stats(); return float64(open) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "corral_sessions_evicted_total", Help: "Legacy sessions ended because their client (principal, or address when anonymous) opened one over its quota.",
		}, func() float64 { _, evicted, _ := stats(); return float64(evicted) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "corral_sessions_refused_total", Help: "Legacy sessions refused because every session slot was in use.",
		}, func() float64 { _, _, refused := stats(); return float64(refused) }),
	)
}

// Admission exports the HTTP transport's refusals, read from stats at
// every scrape: corral_http_requests_refused_total, by reason
// (concurrency: a client over its bound on requests in progress;
// body_timeout: a body slower than http.readBodyTimeout). Call it once.
func (m *Metrics) Admission(stats func() (concurrency, bodyTimeout int64)) {
	const name, help = "corral_http_requests_refused_total", "HTTP requests refused before they were served, by reason (concurrency, body_timeout)."
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "concurrency"}},
			func() float64 { c, _ := stats(); return float64(c) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "body_timeout"}},
			func() float64 { _, t := stats(); return float64(t) }),
	)
}

// ClusterStats is a cluster replica's state, read at every scrape.
type ClusterStats struct {
	// Connected: NATS is reachable; while it is not, the replica serves
	// alone (no cross-replica events, no shared kv).
	Connected bool
	// Reconnects counts the times the connection came back.
	Reconnects int64
	// Sent, Received and Dropped count the bus's events: sent to the
	// other replicas, received from them, and dropped (not sent while
	// NATS was away, or received malformed).
	Sent, Received, Dropped int64
}

// Cluster exports a cluster replica's state, read from stats at every
// scrape: corral_cluster_connected, corral_cluster_reconnects_total and
// corral_cluster_events_total by direction (sent, received, dropped).
// Call it once, in cluster mode only.
func (m *Metrics) Cluster(stats func() ClusterStats) {
	const events, eventsHelp = "corral_cluster_events_total", "Cross-replica events on the cluster bus, by direction (sent, received, dropped: not sent while NATS was away, or received malformed)."
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "corral_cluster_connected", Help: "1 while this replica is connected to NATS, else 0 (serving alone: no cross-replica events, no shared kv).",
		}, func() float64 {
			if stats().Connected {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "corral_cluster_reconnects_total", Help: "Times the connection to NATS came back after an outage.",
		}, func() float64 { return float64(stats().Reconnects) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: events, Help: eventsHelp, ConstLabels: prometheus.Labels{"direction": "sent"}},
			func() float64 { return float64(stats().Sent) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: events, Help: eventsHelp, ConstLabels: prometheus.Labels{"direction": "received"}},
			func() float64 { return float64(stats().Received) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: events, Help: eventsHelp, ConstLabels: prometheus.Labels{"direction": "dropped"}},
			func() float64 { return float64(stats().Dropped) }),
	)
}

// Generation exports the served plugin set's generation, read from gen at
// every scrape, as corral_plugin_set_info{generation="…"} 1: replicas
// serving the same plugins show the same value. Call it once.
func (m *Metrics) Generation(gen func() string) {
	m.reg.MustRegister(generationCollector{
		desc: prometheus.NewDesc("corral_plugin_set_info",
			"The served plugin set; its generation label is the same on every replica serving the same plugins. The value is 1.",
			[]string{"generation"}, nil),
		gen: gen,
	})
}

type generationCollector struct {
	desc *prometheus.Desc
	gen  func() string
}

func (c generationCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c generationCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, c.gen())
}

var _ prometheus.Collector = generationCollector{}
