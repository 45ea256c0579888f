package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// MetadataPath is where the OAuth 2.0 Protected Resource Metadata document
// (RFC 9728) is served.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Options configure an Authenticator.
type Options struct {
	// Tokens are the static bearer tokens.
	Tokens []StaticToken
	// JWT, when non-nil, accepts JWT bearer tokens.
	JWT *JWTConfig
	// Anonymous, when non-nil, is the principal of a request that carries
	// no Authorization header. When nil such requests get 401, unless no
	// credentials are configured at all (then everyone is Anonymous or
	// catalog.Anonymous()).
	Anonymous *abi.Principal
	// Resource is the protected resource's identifier for the metadata
	// document, e.g. "https://mcp.example.com/mcp"; "" derives it from
	// each request's Host and the /mcp path.
	Resource string
	// AuthorizationServers are the issuers listed in the metadata document.
	AuthorizationServers []string
	// Scopes are the scopes listed in the metadata document.
	Scopes []string
	// Operators hold the operator role (OperatorOnly).
	Operators Operators
	// Logger receives authentication failures (never tokens); nil discards.
	Logger *slog.Logger
	// Origin, when set, returns the scheme and host a client used to reach
	// a request ("https://mcp.example.com"), for the URLs the client is
	// sent to: behind a trusted proxy, the proxy's (transport's
	// TrustedProxies.PublicOrigin). Nil uses the request's own.
	Origin func(*http.Request) string
	// ClientAddr, when set, names the client a refused request is logged
	// under: behind a trusted proxy, the address the proxy reports
	// (transport.ClientAddr). Nil logs the TCP peer.
	ClientAddr func(*http.Request) string
}

// Authenticator resolves the principal of HTTP requests.
type Authenticator struct {
	opts   Options
	log    *slog.Logger
	static *staticTokens
	jwt    *jwtVerifier
}

// Errors Authenticate returns.
var (
	// ErrNoCredentials: the request has no Authorization header and
	// anonymous access is off.
	ErrNoCredentials = errors.New("auth: credentials required")
	// ErrInvalidToken: the bearer token is unknown, malformed, expired or
	// for another issuer or audience.
	ErrInvalidToken = errors.New("auth: invalid token")
)

// New returns an Authenticator for opts.
func New(opts Options) (*Authenticator, error) {
	a := &Authenticator{opts: opts, log: opts.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	st, err := newStaticTokens(opts.Tokens)
	if err != nil {
		return nil, err
	}
	a.static = st
	if opts.JWT != nil {
		if a.jwt, err = newJWTVerifier(*opts.JWT); err != nil {
			return nil, err
		}
	}
	if opts.Anonymous != nil && opts.Anonymous.ID == "" {
		return nil, fmt.Errorf("auth: the anonymous principal needs an id")
	}
	return a, nil
}

// Required reports whether requests without credentials are refused.
func (a *Authenticator) Required() bool {
	return a.opts.Anonymous == nil && (len(a.static.hashes) > 0 || a.jwt != nil)
}

// Authenticate returns the principal of r's credentials. It returns
// ErrNoCredentials or ErrInvalidToken (wrapped) when r may not proceed.
func (a *Authenticator) Authenticate(r *http.Request) (abi.Principal, error) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		switch {
		case a.opts.Anonymous != nil:
			return clonePrincipal(*a.opts.Anonymous), nil
		case a.Required():
			return abi.Principal{}, ErrNoCredentials
		}
		return abi.Principal{ID: "anonymous"}, nil
	}
	if len(h) > 1 {
		return abi.Principal{}, fmt.Errorf("%w: more than one Authorization header", ErrInvalidToken)
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(h[0]), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return abi.Principal{}, fmt.Errorf("%w: not a bearer token", ErrInvalidToken)
	}
	return a.Token(token)
}

// Token returns the principal of a bearer token.
func (a *Authenticator) Token(token string) (abi.Principal, error) {
	if p, ok := a.static.lookup(token); ok {
		return p, nil
	}
	if a.jwt != nil && strings.Count(token, ".") == 2 {
		p, err := a.jwt.verify(token)
		if err != nil {
			return abi.Principal{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
		}
		return p, nil
	}
	return abi.Principal{}, ErrInvalidToken
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p abi.Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// PrincipalOf returns the principal Middleware stored in r's context. It
// fails (so a transport refuses the request) when r did not pass through
// Middleware: the transports fail closed.
func PrincipalOf(r *http.Request) (abi.Principal, error) {
	p, ok := r.Context().Value(ctxKey{}).(abi.Principal)
	if !ok || p.ID == "" {
		return abi.Principal{}, ErrNoCredentials
	}
	return p, nil
}

// Middleware authenticates every request before next sees it: on success
// the principal is in the request's context (read it with PrincipalOf); on
// failure the client gets 401 with WWW-Authenticate naming the metadata
// document, and next is not called.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err != nil {
			a.log.Info("auth: refused request", "remote", a.remote(r), "reason", reason(err))
			a.Challenge(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// reason describes err without anything from the token.
func reason(err error) string {
	if errors.Is(err, ErrNoCredentials) {
		return "no credentials"
	}
	return "invalid token"
}

// Challenge writes 401 with WWW-Authenticate (RFC 6750, RFC 9728 §5.1)
// and a JSON-RPC error body without id.
func (a *Authenticator) Challenge(w http.ResponseWriter, r *http.Request, err error) {
	v := `Bearer realm="corral", resource_metadata="` + a.baseURL(r) + MetadataPath + `"`
	if errors.Is(err, ErrInvalidToken) {
		v += `, error="invalid_token", error_description="the bearer token is invalid or expired"`
	}
	w.Header().Set("WWW-Authenticate", v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unauthorized: a valid bearer token is required."}}`))
}

// remote is the client a log line about r names.
func (a *Authenticator) remote(r *http.Request) string {
	if a.opts.ClientAddr != nil {
		return a.opts.ClientAddr(r)
	}
	return r.RemoteAddr
}

func (a *Authenticator) baseURL(r *http.Request) string {
	if a.opts.Origin != nil {
		return a.opts.Origin(r)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// MetadataHandler serves the Protected Resource Metadata document.
func (a *Authenticator) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		doc := struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers,omitempty"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
			ScopesSupported        []string `json:"scopes_supported,omitempty"`
			ResourceName           string   `json:"resource_name"`
		}{
			Resource:               a.opts.Resource,
			AuthorizationServers:   a.opts.AuthorizationServers,
			BearerMethodsSupported: []string{"header"},
			ScopesSupported:        a.opts.Scopes,
			ResourceName:           "corral",
		}
		if doc.Resource == "" {
			doc.Resource = a.baseURL(r) + "/mcp"
		}
		b, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = w.Write(b)
	})
}
