package transport

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corral-mcp/corral/host/catalog"
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

var (
	errBadBase64   = errors.New("transport: invalid base64 in header value")
	errBadHeaderCh = errors.New("transport: header value has characters outside visible ASCII")
)

// DecodeHeaderValue decodes one MCP header value: surrounding whitespace is
// dropped, and a value of the form =?base64?<standard base64>?= is decoded
// to the UTF-8 text it carries. A plain value must be printable ASCII; an
// encoded value must be valid base64 of valid UTF-8.
func DecodeHeaderValue(v string) (string, error) {
	v = strings.Trim(v, " \t")
	const pre, suf = "=?base64?", "?="
	if len(v) >= len(pre)+len(suf) && strings.HasPrefix(v, pre) && strings.HasSuffix(v, suf) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(suf)])
		if err != nil || !utf8.Valid(b) {
			return "", errBadBase64
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", errBadHeaderCh
		}
	}
	return v, nil
}

// checkHeaders validates a modern request's headers against its body
// (notifications are not checked: their headers are not defined):
// MCP-Protocol-Version equals _meta's version, Mcp-Method equals the method
// (requests only), Mcp-Name equals params.name or params.uri where the
// method has one, and the Mcp-Param-* headers of a tools/call match the
// arguments they mirror (params). It returns the -32020 error to send, or
// nil.
func checkHeaders(h http.Header, m *mcp.Message, params []catalog.ParamHeader) *mcp.Error {
	mismatch := func(msg string) *mcp.Error {
		return &mcp.Error{Code: mcp.CodeHeaderMismatch, Message: "Header mismatch: " + msg}
	}
	check := func(name, key, want string) *mcp.Error {
		vals := h[key]
		if len(vals) == 0 {
			return mismatch(name + " header is required.")
		}
		if len(vals) > 1 {
			return mismatch(name + " header must appear once.")
		}
		got, err := DecodeHeaderValue(vals[0])
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
	return checkParamHeaders(h, m.ToolArguments(), params, mismatch)
}

// HeaderParamPrefix starts the headers that mirror tool arguments.
const HeaderParamPrefix = "Mcp-Param-"

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// the arguments they mirror: an argument present in the body (and not
// null) needs its header, once, equal to it after decoding; integers
// compare numerically, booleans as true/false.
func checkParamHeaders(h http.Header, args json.RawMessage, params []catalog.ParamHeader, mismatch func(string) *mcp.Error) *mcp.Error {
	if len(params) == 0 {
		return nil
	}
	var body map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &body) != nil {
		return nil // the arguments are invalid; the method answers that
	}
	for _, p := range params {
		raw, ok := body[p.Param]
		if !ok || string(raw) == "null" {
			continue
		}
		name := HeaderParamPrefix + p.Header
		vals := h.Values(name)
		if len(vals) != 1 {
			return mismatch(name + " header must appear once when " + p.Param + " is in the arguments.")
		}
		got, err := DecodeHeaderValue(vals[0])
		if err != nil {
			return mismatch(name + " header value is malformed.")
		}
		if !paramEqual(p.Type, raw, got) {
			return mismatch(name + " header does not match the request body.")
		}
	}
	return nil
}

// paramEqual compares a mirrored header value with the JSON argument.
func paramEqual(typ string, raw json.RawMessage, header string) bool {
	switch typ {
	case "string":
		var s string
		return json.Unmarshal(raw, &s) == nil && s == header
	case "boolean":
		var b bool
		return json.Unmarshal(raw, &b) == nil && strconv.FormatBool(b) == header
	case "integer":
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		a, err1 := strconv.ParseFloat(n.String(), 64)
		b, err2 := strconv.ParseFloat(header, 64)
		return err1 == nil && err2 == nil && a == b
	}
	return false
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
