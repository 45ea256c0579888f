package main

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/transport"
)

// operatorRoutes serve what only operators may read: the metrics (which
// name every plugin, private ones included) and the status (plugin states,
// load errors, conflicts, missing grants; the cluster connection), which
// status returns.
func operatorRoutes(m *metrics.Metrics, status func() any, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("GET /status", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, err := json.Marshal(status())
		if err != nil {
			log.Error("status: encode", "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(append(b, '\n'))
	}))
	return mux
}

// probes answers /healthz and /readyz to any Host, so that balancer and
// orchestrator probes (which name the address they dial) keep working,
// and hands every other request to rest. detail puts the reason a server
// is not ready in /readyz's body.
func probes(h *metrics.Health, detail bool, rest http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", h.Healthz())
	mux.Handle("GET /readyz", h.Readyz(detail))
	mux.Handle("/", rest)
	return mux
}

// mcpRoutes is the HTTP listener: the probes, bare; then, behind the Host
// and Origin check (first, so a rebound page gets 403 and never a 401
// challenge naming its host), /mcp and /ws behind authentication, the
// protected resource metadata, and the operator routes for operator
// credentials only (everyone else gets the 404 of an unknown path).
func mcpRoutes(guard transport.HostGuard, authn *auth.Authenticator, mcpH, wsH, ops http.Handler, health *metrics.Health) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", authn.Middleware(mcpH))
	mux.Handle("/ws", authn.Middleware(wsH))
	mux.Handle(auth.MetadataPath, authn.MetadataHandler())
	opsOnly := authn.OperatorOnly(ops)
	mux.Handle("/metrics", opsOnly)
	mux.Handle("/status", opsOnly)
	return probes(health, false, guard.Wrap(mux))
}

// adminRoutes is the admin listener, the operator surface: probes with
// their reasons, and the operator routes without credentials. Its Host
// check admits IP addresses too, which scrapers dial and a rebinding page
// cannot send.
func adminRoutes(guard transport.HostGuard, ops http.Handler, health *metrics.Health) http.Handler {
	guard.AnyIP = true
	return probes(health, true, guard.Wrap(ops))
}
