package transport

import (
	"net"
	"net/http"
	"strings"
)

// Headers a trusted proxy may report the scheme and host the client used
// in, besides Forwarded's proto= and host= (RFC 7239).
const (
	HeaderXForwardedProto = "X-Forwarded-Proto"
	HeaderXForwardedHost  = "X-Forwarded-Host"
)

// PublicOrigin returns the scheme and host the client used to reach r, as
// "https://mcp.example.com": those of r itself (https when r came over
// TLS; its Host) unless the TCP peer is a trusted proxy. Then the proxy's
// report wins, from the header t reads: X-Forwarded-Proto and
// X-Forwarded-Host beside X-Forwarded-For, or the proto= and host= of the
// last element of Forwarded, the one the nearest proxy wrote. A value that
// is not http or https, or not a host[:port], is ignored. URLs a client is
// sent to (the RFC 9728 resource_metadata, the resource itself) are built
// from it, so that behind a TLS-terminating proxy they name the proxy's
// https address, not the internal one.
func (t TrustedProxies) PublicOrigin(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if peer := parseHop(r.RemoteAddr); peer.IsValid() && t.trusts(peer) {
		var proto, fwdHost string
		if t.Header == HeaderForwarded {
			proto, fwdHost = forwardedOrigin(r.Header.Values(HeaderForwarded))
		} else {
			proto, fwdHost = lastValue(r.Header.Values(HeaderXForwardedProto)), lastValue(r.Header.Values(HeaderXForwardedHost))
		}
		if p := strings.ToLower(proto); p == "http" || p == "https" {
			scheme = p
		}
		if validHost(fwdHost) {
			host = fwdHost
		}
	}
	return scheme + "://" + host
}

// lastValue is the right-most comma-separated value of header lines: the
// one the nearest proxy appended.
func lastValue(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	vs := strings.Split(lines[len(lines)-1], ",")
	return strings.TrimSpace(vs[len(vs)-1])
}

// forwardedOrigin returns the proto= and host= of the last element of the
// Forwarded header lines.
func forwardedOrigin(lines []string) (proto, host string) {
	if len(lines) == 0 {
		return "", ""
	}
	elems := splitQuoted(lines[len(lines)-1], ',')
	for _, pair := range splitQuoted(elems[len(elems)-1], ';') {
		name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "proto":
			proto = unquote(strings.TrimSpace(val))
		case "host":
			host = unquote(strings.TrimSpace(val))
		}
	}
	return proto, host
}

// validHost reports whether h is a host or host:port a URL may carry.
func validHost(h string) bool {
	if h == "" || len(h) > 255 || strings.ContainsAny(h, "/?#@ \\\"'<>") {
		return false
	}
	if host, port, err := net.SplitHostPort(h); err == nil {
		return host != "" && port != "" && strings.Trim(port, "0123456789") == ""
	}
	return !strings.Contains(h, ":") || strings.HasPrefix(h, "[")
}
