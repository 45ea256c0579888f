package plugin

import (
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/corral-mcp/corral/abi"
)

// maxEgressLogged bounds the distinct refused destinations a plugin logs:
// past it, refusals are only counted (Observer.Denied), so a guest trying
// many hosts cannot flood the log.
const maxEgressLogged = 32

// egressLog remembers which refused destinations a plugin has logged.
type egressLog struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether key is logged for the first time, within the
// bound.
func (l *egressLog) first(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] || len(l.seen) >= maxEgressLogged {
		return false
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	return true
}

// logEgressDenied explains an HTTP request the policy refused, once per
// plugin and destination: the host and port refused, and the grant an
// operator would add to allow it. The guest sees only ErrnoDenied.
func (p *Plugin) logEgressDenied(de *deniedError) {
	if !p.egress.first(string(de.reason) + " " + de.detail) {
		return
	}
	hosts := p.cfg.GrantKeys[abi.CapHTTP] // plugin.<name>.grants.http.hosts
	if hosts == "" {
		hosts = "grants.http.hosts"
	}
	switch de.reason {
	case denyHost:
		p.log.Warn("plugin HTTP request refused: host not granted", "host", de.host, "port", de.port,
			"grant", hosts, "fix", fmt.Sprintf("add %q (this port only) or %q (any port) to %s",
				net.JoinHostPort(de.host, de.port), de.host, hosts))
	case denyAddress:
		private := strings.TrimSuffix(hosts, ".hosts") + ".allowPrivate"
		p.log.Warn("plugin HTTP request refused: the address is not public", "address", de.host, "port", de.port,
			"detail", de.detail, "grant", private,
			"fix", fmt.Sprintf("set %s: true only if the plugin must reach private or loopback addresses", private))
	default:
		p.log.Warn("plugin HTTP request refused", "reason", string(de.reason), "detail", de.detail,
			"fix", "the plugin may fetch only http and https URLs without user:password")
	}
}
