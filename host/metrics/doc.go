// Package metrics exposes corral's Prometheus metrics (all named corral_…,
// on a registry of their own) and the /metrics, /healthz and /readyz
// handlers.
//
// [Metrics] receives the plugin runtime's events (calls, instances,
// quarantine, denied host calls) and the registry's (reloads, plugins
// serving). [Health] answers /readyz with 503 until the plugin set is loaded
// and again while the server drains on shutdown.
package metrics
