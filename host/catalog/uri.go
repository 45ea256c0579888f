package catalog

import (
	"net/url"
	"strings"
)

// MaxURILength bounds the URIs the catalog accepts from clients.
const MaxURILength = 8192

// ValidateURI checks a URI a client sent before any provider sees it: it
// must be an absolute RFC 3986 URI (scheme ":" …) without control
// characters, and a file:// URI must name an absolute, clean path with no
// ".." or "." segments, before or after percent-decoding
// (MCP 2026-07-28, server/resources §Security). It returns the lowercased
// scheme, or a *Error of KindInvalidParams naming the URI.
func ValidateURI(uri string) (scheme string, err error) {
	bad := func(why string) (string, error) {
		return "", &Error{Kind: KindInvalidParams, Message: "invalid resource URI: " + why, URI: uri}
	}
	if uri == "" {
		return bad("empty")
	}
	if len(uri) > MaxURILength {
		return bad("longer than 8192 bytes")
	}
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		if c < 0x20 || c == 0x7f {
			return bad("control character")
		}
		if c == ' ' || c == '\\' || c == '"' || c == '<' || c == '>' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' {
			return bad("character not allowed in a URI")
		}
	}
	colon := strings.IndexByte(uri, ':')
	if colon <= 0 {
		return bad("no scheme")
	}
	scheme = uri[:colon]
	if !validScheme(scheme) {
		return bad("malformed scheme")
	}
	scheme = strings.ToLower(scheme)
	u, perr := url.Parse(uri)
	if perr != nil {
		return bad("does not parse")
	}
	if scheme == "file" {
		if err := checkFilePath(u); err != nil {
			return bad(err.Error())
		}
	}
	return scheme, nil
}

// validScheme reports whether s is an RFC 3986 scheme:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

type uriError string

func (e uriError) Error() string { return string(e) }

// checkFilePath applies the directory-traversal rules to a file:// URI.
func checkFilePath(u *url.URL) error {
	if u.Opaque != "" {
		return uriError("file URI must be file:///absolute/path")
	}
	if u.Host != "" && u.Host != "localhost" {
		return uriError("file URI names a remote host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return uriError("file URI has a query or fragment")
	}
	raw := u.EscapedPath()
	decoded := u.Path
	if !strings.HasPrefix(decoded, "/") {
		return uriError("file path is not absolute")
	}
	for _, p := range []string{raw, decoded} {
		if strings.ContainsRune(p, 0) {
			return uriError("file path contains NUL")
		}
		if strings.Contains(strings.ToLower(p), "%2f") || strings.Contains(strings.ToLower(p), "%5c") || strings.ContainsRune(p, '\\') {
			return uriError("file path contains an encoded or backslash separator")
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." || seg == "." {
				return uriError("file path contains a dot segment")
			}
		}
	}
	if strings.Contains(decoded, "//") {
		return uriError("file path contains an empty segment")
	}
	return nil
}

// schemeOf returns the lowercased scheme of an already validated URI.
func schemeOf(uri string) string {
	i := strings.IndexByte(uri, ':')
	if i <= 0 {
		return ""
	}
	return strings.ToLower(uri[:i])
}
