package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/console"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/registry"
	"github.com/corral-mcp/corral/host/transport"
)

// operatorRoutes serve what only operators may read: the metrics (which
// name every plugin, private ones included), the status (plugin states,
// load errors, conflicts, missing grants; the cluster connection), which
// status returns, and the console.
func operatorRoutes(m *metrics.Metrics, status func() any, con http.Handler, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle(console.Prefix, con)
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

// consoleHandler is the operator console over reg. It browses as the
// operator's token where there is one (the HTTP listener), else as admin,
// the principal auth.console names.
func consoleHandler(m *metrics.Metrics, reg *registry.Registry, admin abi.Principal, log *slog.Logger) http.Handler {
	return console.New(console.Options{
		Registry: reg, Metrics: m, Version: readBuildInfo().Version, Logger: log,
		Principal: func(r *http.Request) abi.Principal {
			if p, err := auth.PrincipalOf(r); err == nil {
				return p
			}
			return admin
		},
	})
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
	mux.Handle(console.Prefix, opsOnly)
	mux.HandleFunc("GET /{$}", pointer)
	return probes(health, false, guard.Wrap(mux))
}

// pointer answers GET / on the MCP listener: a person who opened the
// server's address in a browser learns where clients and operators go.
// It names no plugin and nothing only an operator may see.
func pointer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>corral</title><link rel="icon" href="data:,"></head><body>
<h1>corral</h1>
<p>This is an MCP server: connect an MCP client (Streamable HTTP) to <code>/mcp</code>, or a WebSocket one to <code>/ws</code>.</p>
<p>Operators: the console is at <code>/console/</code> on the admin listener (<code>admin.addr</code>), or here with an operator token (<code>auth.operator</code>).</p>
</body></html>
`)
}

// adminRoutes is the admin listener, the operator surface: probes with
// their reasons, and the operator routes without credentials. Its Host
// check admits IP addresses too, which scrapers dial and a rebinding page
// cannot send.
func adminRoutes(guard transport.HostGuard, ops *http.ServeMux, health *metrics.Health) http.Handler {
	guard.AnyIP = true
	mux := http.NewServeMux()
	mux.Handle("/", ops)
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	return probes(health, true, guard.Wrap(mux))
}
