package transport

import (
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/corral-mcp/corral/host/mcp"
)

// HostGuard refuses requests whose Host or Origin header names a host not
// allowed, against DNS rebinding (spec 2026-07-28 basic/transports,
// security warning): a page on evil.example whose name is made to resolve
// to 127.0.0.1 sends Host: evil.example, and gets 403 before anything else
// runs (authentication included, so that not even a 401 challenge echoing
// its Host answers it).
type HostGuard struct {
	// AllowedHosts and AllowedOrigins have the syntax and defaults of
	// HTTPOptions' fields of the same names.
	AllowedHosts   []string
	AllowedOrigins []string
	// AnyIP also allows a Host that is an IP address, with or without a
	// port. A rebinding page can only send its own domain name as Host, so
	// an address is safe where the page's Origin would not be answered
	// anyway: the read-only operator endpoints a scraper reaches by address.
	AnyIP bool
	// Logger receives refusals; nil discards.
	Logger *slog.Logger
}

// Wrap returns next behind the guard.
func (g HostGuard) Wrap(next http.Handler) http.Handler {
	hosts, origins := g.AllowedHosts, g.AllowedOrigins
	if len(hosts) == 0 {
		hosts = DefaultAllowedHosts
	}
	if len(origins) == 0 {
		origins = DefaultAllowedHosts
	}
	log := orDiscard(g.Logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refuseHostOrigin(w, r, hosts, origins, g.AnyIP, log) {
			next.ServeHTTP(w, r)
		}
	})
}

// refuseHostOrigin answers 403 with a JSON-RPC error and reports true when
// r's Host or Origin is not allowed.
func refuseHostOrigin(w http.ResponseWriter, r *http.Request, hosts, origins []string, anyIP bool, log *slog.Logger) bool {
	if !hostAllowed(r.Host, hosts) && !(anyIP && isIPHost(r.Host)) {
		log.Warn("transport: refused Host", "host", r.Host)
		writeError(w, http.StatusForbidden, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Forbidden: Host not allowed."})
		return true
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, origins) {
		log.Warn("transport: refused Origin", "origin", origin)
		writeError(w, http.StatusForbidden, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Forbidden: Origin not allowed."})
		return true
	}
	return false
}

// isIPHost reports whether a Host header value is an IP address, with or
// without a port.
func isIPHost(host string) bool {
	name, _ := splitHost(host)
	a, err := netip.ParseAddr(name)
	return err == nil && a.Zone() == ""
}
