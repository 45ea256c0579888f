// Package metrics exposes corral's Prometheus metrics (all named corral_…,
// on a registry of their own) and the handlers of /metrics, /healthz and
// /readyz; where each is mounted, and for whom, is the server's choice
// (cmd/corral: /metrics only on the operator surface).
//
// [Metrics] receives the plugin runtime's events (calls, instances,
// quarantine, denied host calls) and the registry's (reloads, plugins
// serving). [Health] answers /readyz with 503 until the plugin set is loaded
// and again while the server drains on shutdown.
package metrics
