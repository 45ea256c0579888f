package transport

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("fd00::/8")}
	xff := TrustedProxies{Prefixes: proxies}
	fwd := TrustedProxies{Prefixes: proxies, Header: HeaderForwarded}
	tests := []struct {
		name    string
		remote  string
		proxies TrustedProxies
		headers map[string][]string
		want    string
	}{
		{"no proxies: the peer", "203.0.113.5:4000", TrustedProxies{}, nil, "203.0.113.5"},
		{"no proxies: a spoofed XFF is ignored", "203.0.113.5:4000", TrustedProxies{},
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.5"},
		{"untrusted peer: a spoofed XFF is ignored", "203.0.113.5:4000", xff,
			map[string][]string{"X-Forwarded-For": {"10.1.2.3"}}, "203.0.113.5"},
		{"untrusted peer: a spoofed Forwarded is ignored", "203.0.113.5:4000", fwd,
			map[string][]string{"Forwarded": {"for=198.51.100.1"}}, "203.0.113.5"},
		{"trusted peer, one hop", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"trusted peer without a header: the peer", "10.0.0.1:4000", xff, nil, "10.0.0.1"},
		{"client-written left entries are skipped", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"1.1.1.1, 2.2.2.2, 198.51.100.1"}}, "198.51.100.1"},
		{"client claims a trusted address: the proxy's hop wins", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"10.9.9.9, 198.51.100.1"}}, "198.51.100.1"},
		{"chain of trusted proxies", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"6.6.6.6, 198.51.100.1, 192.0.2.7, 10.0.0.2"}}, "198.51.100.1"},
		{"several header lines are one list", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"6.6.6.6, 198.51.100.1", "10.0.0.2"}}, "198.51.100.1"},
		{"all trusted: the left-most", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"10.0.0.3, 10.0.0.2"}}, "10.0.0.3"},
		{"garbage hop: counted as the proxy that reported it", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, evil"}}, "10.0.0.1"},
		{"garbage behind a trusted hop: counted as that hop", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"junk, 10.0.0.2"}}, "10.0.0.2"},
		{"empty entry stops the walk", "10.0.0.1:4000", xff,
			map[string][]string{"X-Forwarded-For": {"198.51.100.1,"}}, "10.0.0.1"},
		{"XFF with ports and IPv6", "[fd00::1]:4000", xff,
			map[string][]string{"X-Forwarded-For": {"[2001:db8::5]:1234"}}, "2001:db8::5"},
		{"IPv4-mapped peer is trusted as IPv4", "[::ffff:10.0.0.1]:4000", xff,
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"XFF configured: Forwarded is not read", "10.0.0.1:4000", xff,
			map[string][]string{"Forwarded": {"for=6.6.6.6"}, "X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"Forwarded configured: XFF is not read", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {"for=198.51.100.1"}, "X-Forwarded-For": {"6.6.6.6"}}, "198.51.100.1"},
		{"Forwarded: right-most untrusted", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {`for=6.6.6.6, for=198.51.100.1;proto=https;by=10.0.0.1, For="10.0.0.2"`}}, "198.51.100.1"},
		{"Forwarded: quoted IPv6 with port", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {`for="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::17"},
		{"Forwarded: a quoted comma does not split", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {`for=198.51.100.1, for="6.6.6.6, 7.7.7.7"`}}, "10.0.0.1"},
		{"Forwarded: unknown stops at the proxy", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {"for=6.6.6.6, for=unknown"}}, "10.0.0.1"},
		{"Forwarded: obfuscated stops at the proxy", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {"for=_hidden"}}, "10.0.0.1"},
		{"Forwarded: element without for stops", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {"for=6.6.6.6, proto=https"}}, "10.0.0.1"},
		{"Forwarded: several lines", "10.0.0.1:4000", fwd,
			map[string][]string{"Forwarded": {"for=6.6.6.6", "for=198.51.100.1", "for=10.0.0.2"}}, "198.51.100.1"},
		{"peer is not an IP", "pipe", xff,
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "invalid IP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.remote, Header: http.Header{}}
			for k, vs := range tt.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			if got := ClientAddr(r, tt.proxies).String(); got != tt.want {
				t.Errorf("ClientAddr = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAddrBucket(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"198.51.100.1", "198.51.100.1/32"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	} {
		if got := AddrBucket(netip.MustParseAddr(tt.addr)).String(); got != tt.want {
			t.Errorf("AddrBucket(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
	if AddrBucket(netip.Addr{}).IsValid() {
		t.Error("AddrBucket of the zero Addr is valid")
	}
}
