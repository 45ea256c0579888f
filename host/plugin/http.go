package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// fetcher performs the http capability's requests: only to granted hosts,
// every redirect re-checked, and (unless allowPrivate) never to a
// non-public address, whatever DNS answers.
type fetcher struct {
	hosts          []string
	allowPrivate   bool
	maxBytes       int64 // the response's header names and values plus its body
	maxHeaders     int
	maxHeaderBytes int
	client         *http.Client
	transport      *http.Transport
	// checkAddr vets every address dialled; tests replace it.
	checkAddr func(netip.AddrPort) error
}

// deniedError is a fetch refused by policy: reason is the metric's label,
// detail what the guest asked for (for the log only); host and port, when
// known, are the destination refused (the port the URL's, or its
// scheme's default).
type deniedError struct {
	reason     denyReason
	detail     string
	host, port string
}

func (e *deniedError) Error() string { return "denied: " + string(e.reason) + ": " + e.detail }

func newFetcher(hosts []string, allowPrivate bool, l Limits) *fetcher {
	f := &fetcher{allowPrivate: allowPrivate, maxBytes: l.HTTPMaxBytes,
		maxHeaders: l.HTTPMaxHeaders, maxHeaderBytes: l.HTTPMaxHeaderBytes}
	for _, h := range hosts {
		f.hosts = append(f.hosts, strings.ToLower(strings.TrimSpace(h)))
	}
	f.checkAddr = f.defaultCheckAddr
	dialer := &net.Dialer{
		Timeout: l.HTTPTimeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &deniedError{reason: denyAddress, detail: "unparsable address " + address}
			}
			return f.checkAddr(ap)
		},
	}
	f.transport = &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   l.HTTPTimeout,
		ResponseHeaderTimeout: l.HTTPTimeout,
		// The transport stops reading a header block past this (the status
		// line and the framing of every line included, 32 bytes a field as
		// HTTP/2 counts them), so an upstream cannot make it buffer more;
		// fetch then checks the exact caps.
		MaxResponseHeaderBytes: int64(l.HTTPMaxHeaderBytes) + 32*int64(l.HTTPMaxHeaders) + 1024,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
	}
	maxRedirects := l.HTTPMaxRedirects
	f.client = &http.Client{
		Transport: f.transport,
		Timeout:   l.HTTPTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			return f.checkURL(req.URL)
		},
	}
	return f
}

func (f *fetcher) close() { f.transport.CloseIdleConnections() }

// defaultCheckAddr refuses non-public addresses unless allowPrivate.
func (f *fetcher) defaultCheckAddr(ap netip.AddrPort) error {
	if f.allowPrivate || publicAddr(ap.Addr()) {
		return nil
	}
	return &deniedError{reason: denyAddress, detail: ap.String(), host: ap.Addr().String(), port: strconv.Itoa(int(ap.Port()))}
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this" network
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215): the operator's own translator
	netip.MustParsePrefix("2001::/32"),       // Teredo: the client's IPv4 address is obfuscated
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// IPv6 prefixes whose addresses carry an IPv4 address that a translator
// or tunnel may deliver to: such an address is as public as the IPv4
// address it embeds (64:ff9b::7f00:1 and ::127.0.0.1 are loopback).
var (
	nat64          = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: IPv4 in the last 32 bits
	ipv4Compatible = netip.MustParsePrefix("::/96")        // RFC 4291 §2.5.5.1, deprecated: the last 32 bits
	sixToFour      = netip.MustParsePrefix("2002::/16")    // RFC 3056: IPv4 in bits 16-47
)

// embeddedIPv4 returns the IPv4 address a NAT64, IPv4-compatible or 6to4
// address embeds.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a), ipv4Compatible.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// publicAddr reports whether a is a globally routable unicast address. An
// IPv6 address embedding an IPv4 address (mapped, NAT64, IPv4-compatible,
// 6to4) is judged by the IPv4 address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		a = v4
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() ||
		a.IsUnspecified() || !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkURL refuses URLs that are not http(s) to a granted host.
func (f *fetcher) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &deniedError{reason: denyScheme, detail: u.Scheme}
	}
	if u.User != nil {
		return &deniedError{reason: denyCredentials, detail: u.Scheme + "://" + u.Host}
	}
	host := strings.ToLower(u.Hostname())
	hostport := host
	port := u.Port()
	if port != "" {
		hostport = net.JoinHostPort(host, port)
	} else if port = "443"; u.Scheme == "http" {
		port = "80"
	}
	for _, g := range f.hosts {
		switch {
		case g == host, g == hostport:
			return nil
		case strings.HasPrefix(g, "*.") && strings.HasSuffix(host, g[1:]):
			return nil
		}
	}
	return &deniedError{reason: denyHost, detail: net.JoinHostPort(host, port), host: host, port: port}
}

// errnoError carries an errno out of fetch.
type errnoError struct {
	errno int32
	err   error
}

func (e *errnoError) Error() string { return abi.ErrnoString(e.errno) + ": " + e.err.Error() }

func (f *fetcher) fetch(ctx context.Context, raw []byte) ([]byte, error) {
	var req abi.HTTPRequest
	if err := jsonread.Unmarshal(raw, &req); err != nil {
		return nil, &errnoError{abi.ErrnoInvalid, err}
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodPost {
		return nil, &errnoError{abi.ErrnoInvalid, fmt.Errorf("method %q", req.Method)}
	}
	u, err := url.Parse(req.URL)
	if err != nil || !u.IsAbs() {
		return nil, &errnoError{abi.ErrnoInvalid, fmt.Errorf("url %q", req.URL)}
	}
	if err := f.checkURL(u); err != nil {
		return nil, err
	}
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(string(req.Body))
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, &errnoError{abi.ErrnoInvalid, err}
	}
	for k, v := range req.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Proxy-Authorization":
			continue
		}
		hr.Header.Set(k, v)
	}
	resp, err := f.client.Do(hr)
	if err != nil {
		if strings.Contains(err.Error(), "response headers exceeded") { // net/http's own cap
			return nil, &errnoError{abi.ErrnoTooLarge, err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	lines, size := 0, 0
	for k, vs := range resp.Header {
		lines += len(vs)
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	if lines > f.maxHeaders || size > f.maxHeaderBytes {
		return nil, &errnoError{abi.ErrnoTooLarge, fmt.Errorf("response headers: %d lines of %d bytes, over the limits of %d lines and %d bytes", lines, size, f.maxHeaders, f.maxHeaderBytes)}
	}
	left := f.maxBytes - int64(size)
	b, err := io.ReadAll(io.LimitReader(resp.Body, left+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > left {
		return nil, &errnoError{abi.ErrnoTooLarge, fmt.Errorf("response over %d bytes, headers included", f.maxBytes)}
	}
	out := abi.HTTPResponse{Status: resp.StatusCode, Body: b}
	if len(resp.Header) > 0 {
		out.Headers = make(map[string]string, len(resp.Header))
		for k, v := range resp.Header {
			out.Headers[k] = strings.Join(v, ", ")
		}
	}
	return json.Marshal(out)
}

func hostHTTP(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncHTTP
	st := mustState(ctx, fn)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	checkRange(fn, mem, ptr, n)
	c := st.caps
	if c == nil || c.http == nil {
		st.denied(stack, abi.CapHTTP, denyNotGranted)
		return
	}
	if n > maxHTTPReqBytes {
		setRet(stack, abi.ErrnoTooLarge)
		return
	}
	out, err := c.http.fetch(ctx, guestBytes(fn, mem, ptr, n))
	if err == nil {
		st.setOutput(stack, out)
		return
	}
	var de *deniedError
	var ee *errnoError
	var ne net.Error
	switch {
	case errors.As(err, &de):
		st.p.logEgressDenied(de)
		st.denied(stack, abi.CapHTTP, de.reason)
	case errors.As(err, &ee):
		setRet(stack, ee.errno)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		setRet(stack, abi.ErrnoTimeout)
	default:
		st.p.log.Debug("http fetch failed", "err", err)
		setRet(stack, abi.ErrnoIO)
	}
}
