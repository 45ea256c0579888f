package config

// Metrics configures the Prometheus metrics (host/metrics).
type Metrics struct {
	// PluginHistograms is how many plugins get latency histograms of
	// their own, the first that many called; the others share the
	// plugin="_other" histograms. Counters stay per plugin for all.
	PluginHistograms int `koanf:"pluginHistograms"`
}

// metricsKeys are the schema keys of this file.
var metricsKeys = []string{"metrics.pluginHistograms"}

func metricsDefaults(m map[string]any) {
	m["metrics.pluginHistograms"] = 100
}

// validateMetrics checks the metrics.* values.
func validateMetrics(cfg *Config, bad func(key, format string, args ...any)) {
	if n := cfg.Metrics.PluginHistograms; n < 0 || n > 100_000 {
		bad("metrics.pluginHistograms", "must be between 0 and 100000, got %d", n)
	}
}
