package metrics

import (
	"net/http"
	"sync/atomic"
)

// Health answers the liveness and readiness probes.
type Health struct {
	ready    func() error
	draining atomic.Bool
}

// NewHealth returns a Health whose readiness is ready(): nil when ready,
// else the reason. A nil func is always ready.
func NewHealth(ready func() error) *Health {
	return &Health{ready: ready}
}

// SetDraining marks the server as shutting down: /readyz answers 503 from
// now on, so load balancers stop sending requests.
func (h *Health) SetDraining() { h.draining.Store(true) }

// Healthz answers 200 while the process serves at all.
func (h *Health) Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte("ok\n"))
	})
}

// Readyz answers 200 while ready() is nil, 503 otherwise (before the
// plugins are loaded, while one fails for a host reason) and while
// draining. With detail the reason is in the body ("not ready:
// draining"); without, the body is a bare "ok" or "not ready", for probes
// on a listener anyone reaches.
func (h *Health) Readyz(detail bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		reason := ""
		switch {
		case h.draining.Load():
			reason = "draining"
		case h.ready != nil:
			if err := h.ready(); err != nil {
				reason = err.Error()
			}
		}
		switch {
		case reason == "":
			w.Write([]byte("ok\n"))
		case detail:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready: " + reason + "\n"))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready\n"))
		}
	})
}
