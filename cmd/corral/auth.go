package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/transport"
)

// security is what serve builds from the auth and policy keys.
type security struct {
	authn   *auth.Authenticator
	policy  catalog.Policy // nil: everything visible
	limiter *auth.Limiter
	stdio   abi.Principal
	console abi.Principal // whom the console browses as on the admin listener
	authed  bool          // requests carry real principals
}

func buildSecurity(cfg *config.Config, log *slog.Logger) (*security, error) {
	a := cfg.Auth
	opts := auth.Options{
		Resource: a.Resource, AuthorizationServers: a.AuthorizationServers, Logger: log,
		Operators: auth.Operators{Principals: a.Operator.Principals, Groups: a.Operator.Groups},
	}
	proxies := transport.TrustedProxies{Prefixes: cfg.HTTP.TrustedProxyPrefixes(), Header: cfg.HTTP.ForwardedHeader}
	opts.Origin = proxies.PublicOrigin
	opts.ClientAddr = func(r *http.Request) string {
		if a := transport.ClientAddr(r, proxies); a.IsValid() {
			return a.String()
		}
		return r.RemoteAddr
	}
	for _, t := range a.Tokens {
		opts.Tokens = append(opts.Tokens, auth.StaticToken{SHA256: t.SHA256, Principal: t.Principal, Groups: t.Groups})
	}
	if a.JWT.Enabled() {
		opts.JWT = &auth.JWTConfig{
			HMACSecret: []byte(a.JWT.Secret), JWKSFile: a.JWT.JWKSFile, Issuer: a.JWT.Issuer, Audience: a.JWT.Audience,
			Leeway: a.JWT.Leeway, PrincipalClaim: a.JWT.PrincipalClaim, GroupsClaim: a.JWT.GroupsClaim,
		}
	}
	if a.Anonymous.ID != "" {
		opts.Anonymous = &abi.Principal{ID: a.Anonymous.ID, Groups: a.Anonymous.Groups}
	}
	authn, err := auth.New(opts)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &security{authn: authn, limiter: auth.NewLimiter(a.CompletionRate, a.CompletionBurst)}
	s.authed = len(a.Tokens) > 0 || a.JWT.Enabled() || a.Stdio.ID != ""
	if len(cfg.Policy) > 0 {
		rules := make([]auth.Rule, len(cfg.Policy))
		for i, r := range cfg.Policy {
			rules[i] = auth.Rule{Principals: r.Principals, Groups: r.Groups, Plugins: r.Plugins, Schemes: r.Schemes,
				Resources: r.Resources, Templates: r.Templates, Prompts: r.Prompts, Tools: r.Tools}
		}
		pol, err := auth.NewPolicy(rules)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.policy = pol
	}
	s.stdio = catalog.Anonymous()
	if a.Stdio.ID != "" {
		s.stdio = abi.Principal{ID: a.Stdio.ID, Groups: a.Stdio.Groups}
	}
	s.console = catalog.Anonymous()
	if a.Console.ID != "" {
		s.console = abi.Principal{ID: a.Console.ID, Groups: a.Console.Groups}
	}
	return s, nil
}
