package transport

import (
	"net/http"
	"net/netip"
	"strings"
)

// Forwarding headers a trusted proxy may report the client address in.
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded" // RFC 7239
)

// TrustedProxies says which TCP peers may report the address of the
// client behind them, and in which header. The zero value trusts no one:
// the client address is always the TCP peer.
type TrustedProxies struct {
	// Prefixes are the trusted proxies' addresses (a single address is a
	// /32 or /128 prefix).
	Prefixes []netip.Prefix
	// Header is HeaderXForwardedFor (the default when "") or
	// HeaderForwarded. Only one header is read: with both, a client could
	// write the one the proxy does not overwrite and choose its address.
	Header string
}

func (t TrustedProxies) trusts(a netip.Addr) bool {
	for _, p := range t.Prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr returns the address of the client that sent r. It is the TCP
// peer unless the peer is a trusted proxy; then the forwarding header's
// chain of addresses (client first, each proxy appending the peer it saw)
// is walked from the right, past every trusted address, and the first
// untrusted one is the client. Entries left of it are whatever the client
// wrote and are never read, so a client cannot choose its address by
// sending the header itself. A hop that reports no usable address
// ("unknown", an obfuscated RFC 7239 identifier, garbage) ends the walk at
// the trusted proxy that reported it: the request counts as that proxy's.
// If every address is trusted, the left-most one is returned. The zero
// Addr means the peer address is not an IP (a test's pipe, a Unix socket).
func ClientAddr(r *http.Request, t TrustedProxies) netip.Addr {
	peer := parseHop(r.RemoteAddr)
	if !peer.IsValid() || !t.trusts(peer) {
		return peer
	}
	var hops []string
	if t.Header == HeaderForwarded {
		hops = forwardedFor(r.Header.Values(HeaderForwarded))
	} else {
		for _, v := range r.Header.Values(HeaderXForwardedFor) {
			hops = append(hops, strings.Split(v, ",")...)
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseHop(hops[i])
		if !a.IsValid() {
			return client
		}
		client = a
		if !t.trusts(a) {
			return a
		}
	}
	return client
}

// AddrBucket is the prefix quotas keyed by client address should count
// a by: the address itself for IPv4, its /64 for IPv6, since one IPv6
// client usually holds a whole /64.
func AddrBucket(a netip.Addr) netip.Prefix {
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64) // the zero Addr yields the zero Prefix
	return p
}

// parseHop parses one hop's address: "ip", "ip:port", "[v6]" or
// "[v6]:port", with surrounding spaces. IPv4-mapped IPv6 addresses become
// IPv4 and zones are dropped, so that they match prefixes. Anything else
// yields the zero Addr.
func parseHop(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone("")
	}
	return netip.Addr{}
}

// forwardedFor returns the for= value of every element of the Forwarded
// header lines, in order (RFC 7239 §4: elements separated by commas, pairs
// by semicolons, values tokens or quoted strings). An element without a
// for= parameter yields "" (no usable address).
func forwardedFor(lines []string) []string {
	var out []string
	for _, line := range lines {
		for _, elem := range splitQuoted(line, ',') {
			v := ""
			for _, pair := range splitQuoted(elem, ';') {
				name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "for") {
					v = unquote(strings.TrimSpace(val))
					break
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// splitQuoted splits s at sep outside double-quoted strings (a backslash
// escapes the next character inside one).
func splitQuoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote removes the quotes and escapes of an RFC 7230 quoted-string; a
// token is returned as it is, a malformed quoted string as "".
func unquote(v string) string {
	if !strings.HasPrefix(v, `"`) {
		return v
	}
	if len(v) < 2 || !strings.HasSuffix(v, `"`) {
		return ""
	}
	v = v[1 : len(v)-1]
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
