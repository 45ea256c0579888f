package transport

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/corral-mcp/corral/host/mcp"
)

// HTTP header names (spec 2026-07-28 basic/transports §Streamable HTTP).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderSessionID       = "Mcp-Session-Id"
)

// The canonical forms of the header names checked on every request, for
// looking them up without canonicalizing (and allocating) each time.
var (
	keyProtocolVersion = http.CanonicalHeaderKey(HeaderProtocolVersion)
	keyMethod          = http.CanonicalHeaderKey(HeaderMethod)
	keyName            = http.CanonicalHeaderKey(HeaderName)
)

// checkHeaders validates a modern request's headers against its body
// (notifications are not checked: their headers are not defined):
// MCP-Protocol-Version equals _meta's version, Mcp-Method equals the method
// (requests only), Mcp-Name equals params.name or params.uri where the
// method has one. It returns the -32020 error to send, or nil. None of
// these depends on what the caller may see; the Mcp-Param-* headers, which
// do, are checked by the server once the tool is known to be visible
// (mcp.Request.Header).
func checkHeaders(h http.Header, m *mcp.Message) *mcp.Error {
	mismatch := mcp.HeaderMismatch
	check := func(name, key, want string) *mcp.Error {
		vals := h[key]
		if len(vals) == 0 {
			return mismatch(name + " header is required.")
		}
		if len(vals) > 1 {
			return mismatch(name + " header must appear once.")
		}
		got, err := mcp.DecodeHeaderValue(vals[0])
		if err != nil {
			return mismatch(name + " header value is malformed.")
		}
		if got != want {
			return mismatch(name + " header does not match the request body.")
		}
		return nil
	}
	if m.IsNotification() {
		return nil // notification headers are not defined; be lenient
	}
	if e := check(HeaderProtocolVersion, keyProtocolVersion, m.ProtocolVersion()); e != nil {
		return e
	}
	if e := check(HeaderMethod, keyMethod, m.Method); e != nil {
		return e
	}
	if name, ok := m.HeaderName(); ok {
		if e := check(HeaderName, keyName, name); e != nil {
			return e
		}
	}
	return nil
}

// hostAllowed reports whether host (a Host header, or the host of an
// Origin) is one of allowed. An entry with a port ("example.com:8080")
// matches exactly; one without ("localhost", "[::1]") matches any port;
// "*" matches everything.
func hostAllowed(host string, allowed []string) bool {
	host = strings.ToLower(host)
	name, _ := splitHost(host)
	if name == "" {
		return false
	}
	for _, a := range allowed {
		a = strings.ToLower(a)
		an, ap := splitHost(a)
		switch {
		case a == "*":
			return true
		case ap != "":
			if a == host {
				return true
			}
		case an == name:
			return true
		}
	}
	return false
}

// splitHost splits "host:port", "[v6]:port", "host" or "[v6]" into the
// bare host name and the port ("" when absent).
func splitHost(h string) (name, port string) {
	// Without a colon there is no port: skip SplitHostPort and the error
	// it would allocate.
	if strings.Contains(h, ":") {
		if n, p, err := net.SplitHostPort(h); err == nil {
			return n, p
		}
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ""
}

// originAllowed checks an Origin header value: "null" and unparsable
// origins are refused, otherwise its host must be allowed.
func originAllowed(origin string, allowed []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return hostAllowed(u.Host, allowed)
}
