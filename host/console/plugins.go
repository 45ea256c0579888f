package console

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/registry"
	dto "github.com/prometheus/client_model/go"
)

// setView is the plugin set as the overview shows it.
type setView struct {
	Generation string
	Ready      bool
	LastReload time.Time
	ReloadOK   bool
	LastError  string
	Plugins    []pluginView
	Files      []registry.FileStatus // files that serve nothing (failed, refused, pending)
}

// pluginView is one plugin: what it claims, asks and is given, and how it
// runs.
type pluginView struct {
	Name, Version, Title, Description string
	State, Path, Digest, Binding      string
	Error                             string
	Since                             time.Time

	Schemes   []string
	Resources []abi.Resource
	Templates []abi.Template
	Prompts   []abi.Prompt
	Tools     []abi.Tool

	Requested []string // capabilities the manifest asks for
	Required  []string // of which the plugin cannot work without
	Granted   []string // what the configuration grants, described
	Ungranted []registry.Ungranted
	Engine    string
	Limits    config.Limits

	stats
}

// stats are a plugin's runtime figures from the metrics.
type stats struct {
	Calls       float64
	Rate        float64 // calls per second over the last sampling window
	Errors      map[string]float64
	ErrorsTotal float64
	MeanLatency float64 // seconds, from the plugin's call counters
	// P95Latency is the upper bound, in seconds, of the bucket holding
	// the 95th percentile; 0 without calls or when the plugin has no
	// latency histogram of its own (metrics.pluginHistograms).
	P95Latency  float64
	Instances   float64
	Quarantined bool
	LastErrors  []metrics.CallError
}

func (c *Console) setView() setView {
	reg := c.opts.Registry
	st := reg.Status()
	cfg := reg.Config()
	set := reg.Catalog().Current()
	all := c.stats()
	v := setView{Generation: st.Generation, Ready: st.Ready, LastReload: st.LastReload, ReloadOK: st.LastReloadOK, LastError: st.LastError}
	files := map[string]registry.FileStatus{}
	for _, f := range st.Files {
		if f.Plugin != "" && f.State == registry.StateServing {
			files[f.Plugin] = f
		} else {
			v.Files = append(v.Files, f)
		}
	}
	for _, p := range set.Providers() {
		m := p.Manifest()
		f := files[m.Name]
		settings := cfg.PluginSettings(m.Name)
		pv := pluginView{
			Name: m.Name, Version: m.Version, Title: m.Title, Description: m.Description,
			State: cmp.Or(f.State, registry.StateServing), Path: f.Path, Digest: p.Digest(), Binding: f.Binding,
			Error: f.Error, Since: f.Since,
			Schemes: m.Schemes, Resources: m.Resources, Templates: m.Templates, Prompts: m.Prompts, Tools: m.Tools,
			Requested: m.Capabilities, Required: m.RequiredCapabilities, Granted: granted(m, settings.Grants),
			Ungranted: f.Ungranted, Engine: cmp.Or(settings.Engine, cfg.Plugins.Engine), Limits: settings.Limits,
			stats: all[m.Name],
		}
		v.Plugins = append(v.Plugins, pv)
	}
	return v
}

// granted describes the grants that meet a capability the manifest
// requests. Config values are named by key only: they may be secrets.
func granted(m *abi.Manifest, g config.Grants) []string {
	var out []string
	for _, capName := range m.Capabilities {
		switch capName {
		case abi.CapLog:
			if g.Log {
				out = append(out, "log")
			}
		case abi.CapNotify:
			if g.Notify {
				out = append(out, "notify")
			}
		case abi.CapKV:
			if g.KV {
				out = append(out, fmt.Sprintf("kv (quota %d bytes)", g.KVQuota))
			}
		case abi.CapFiles:
			if len(g.Files) > 0 {
				out = append(out, "files: "+strings.Join(g.Files, ", "))
			}
		case abi.CapHTTP:
			if len(g.HTTP.Hosts) > 0 {
				s := "http: " + strings.Join(g.HTTP.Hosts, ", ")
				if g.HTTP.AllowPrivate {
					s += " (private addresses allowed)"
				}
				out = append(out, s)
			}
		case abi.CapConfig:
			if len(g.Config) > 0 {
				out = append(out, "config: "+strings.Join(slices.Sorted(maps.Keys(g.Config)), ", ")+" (values not shown)")
			}
		}
	}
	return out
}

// rates turns call counters into calls per second: each sample older than
// rateWindow starts a new window.
type rates struct {
	mu    sync.Mutex
	at    time.Time
	calls map[string]float64
	rate  map[string]float64
}

const rateWindow = 5 * time.Second

func (r *rates) update(now time.Time, calls map[string]float64) map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.at, r.calls, r.rate = now, calls, map[string]float64{}
		return r.rate
	}
	if dt := now.Sub(r.at).Seconds(); dt >= rateWindow.Seconds() {
		rate := map[string]float64{}
		for p, n := range calls {
			rate[p] = max(n-r.calls[p], 0) / dt
		}
		r.at, r.calls, r.rate = now, calls, rate
	}
	return r.rate
}

// stats reads each plugin's figures from the metrics registry.
func (c *Console) stats() map[string]stats {
	out := map[string]stats{}
	m := c.opts.Metrics
	if m == nil {
		return out
	}
	families, err := m.Registry().Gather()
	if err != nil {
		c.log.Warn("console: metrics", "err", err)
	}
	get := func(p string) stats {
		s := out[p]
		if s.Errors == nil {
			s.Errors = map[string]float64{}
		}
		return s
	}
	buckets := map[string]map[float64]uint64{}
	count := map[string]uint64{}
	seconds := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			p := label(mt, "plugin")
			if p == "" {
				continue
			}
			s := get(p)
			switch f.GetName() {
			case "corral_plugin_calls_total":
				s.Calls += mt.GetCounter().GetValue()
			case "corral_plugin_call_seconds_total":
				seconds[p] += mt.GetCounter().GetValue()
			case "corral_plugin_call_errors_total":
				v := mt.GetCounter().GetValue()
				s.Errors[label(mt, "class")] += v
				s.ErrorsTotal += v
			case "corral_plugin_instances":
				s.Instances += mt.GetGauge().GetValue()
			case "corral_plugin_quarantined":
				s.Quarantined = mt.GetGauge().GetValue() > 0
			case "corral_plugin_call_duration_seconds":
				h := mt.GetHistogram()
				count[p] += h.GetSampleCount()
				if buckets[p] == nil {
					buckets[p] = map[float64]uint64{}
				}
				for _, b := range h.GetBucket() {
					buckets[p][b.GetUpperBound()] += b.GetCumulativeCount()
				}
			}
			out[p] = s
		}
	}
	calls := map[string]float64{}
	for p, s := range out {
		calls[p] = s.Calls
	}
	rate := c.rates.update(time.Now(), calls)
	for p, s := range out {
		s.Rate = rate[p]
		if s.Calls > 0 {
			s.MeanLatency = seconds[p] / s.Calls
		}
		if n := count[p]; n > 0 {
			s.P95Latency = percentile(buckets[p], n, 0.95)
		}
		s.LastErrors = m.LastErrors(p)
		out[p] = s
	}
	return out
}

// percentile is the upper bound of the histogram bucket holding quantile
// q of n samples (+Inf shown as the largest finite bound).
func percentile(b map[float64]uint64, n uint64, q float64) float64 {
	bounds := slices.Sorted(maps.Keys(b))
	want := uint64(math.Ceil(q * float64(n))) // the rank of the sample, 1-based
	for _, ub := range bounds {
		if b[ub] >= want {
			return ub
		}
	}
	if len(bounds) > 0 {
		return bounds[len(bounds)-1]
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, "overview.html", "Plugins", "plugins", c.setView())
}

// pluginsFragment is the overview's plugin section alone, which the page
// polls to follow changes of the plugin set.
func (c *Console) pluginsFragment(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, "plugins", c.setView()); err != nil {
		c.log.Error("console: render", "page", "plugins", "err", err)
	}
}

func (c *Console) plugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	v := c.setView()
	i := slices.IndexFunc(v.Plugins, func(p pluginView) bool { return p.Name == name })
	if i < 0 {
		c.failure(w, r, http.StatusNotFound, "No plugin named "+name+" is serving.")
		return
	}
	c.render(w, r, "plugin.html", "Plugin "+name, "plugins", v.Plugins[i])
}
