package config

import (
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Auth configures who may connect and as whom (host/auth).
type Auth struct {
	// Tokens are static bearer tokens, each stored as its SHA-256
	// (printf %s "$TOKEN" | sha256sum).
	Tokens []Token `koanf:"tokens"`
	JWT    JWT     `koanf:"jwt"`
	// Anonymous is the principal of HTTP and WebSocket requests without an
	// Authorization header. Its ID "" means: refused with 401 once any
	// token or JWT key is configured (and anonymous otherwise).
	Anonymous Principal `koanf:"anonymous"`
	// Stdio is the principal a stdio server serves ("" is anonymous).
	Stdio Principal `koanf:"stdio"`
	// Console is the principal the operator console browses as on the
	// admin listener, which has no credentials ("" is anonymous); on the
	// HTTP listener it browses as the operator's own token.
	Console Principal `koanf:"console"`
	// Resource and AuthorizationServers fill the RFC 9728 metadata
	// document at /.well-known/oauth-protected-resource.
	Resource             string   `koanf:"resource"`
	AuthorizationServers []string `koanf:"authorizationServers"`
	// CompletionRate is the completions per second each principal may
	// make (0: unlimited); CompletionBurst is the bucket size.
	CompletionRate  float64 `koanf:"completionRate"`
	CompletionBurst int     `koanf:"completionBurst"`
	// Operator is the operator role: principals (by id or group) who may
	// read /metrics and /status on the HTTP listener with their token.
	Operator Operator `koanf:"operator"`
}

// Operator names the principals of the operator role.
type Operator struct {
	Principals []string `koanf:"principals"`
	Groups     []string `koanf:"groups"`
}

// Token is one static bearer token.
type Token struct {
	SHA256    string   `koanf:"sha256"`
	Principal string   `koanf:"principal"`
	Groups    []string `koanf:"groups"`
}

// JWT configures JWT bearer tokens; enabled when Secret or JWKSFile is set.
type JWT struct {
	// Secret is the HS256 shared secret (at least 32 bytes); prefer the
	// CORRAL_AUTH_JWT_SECRET environment variable to the file.
	Secret         string        `koanf:"secret"`
	JWKSFile       string        `koanf:"jwksFile"`
	Issuer         string        `koanf:"issuer"`
	Audience       string        `koanf:"audience"`
	Leeway         time.Duration `koanf:"leeway"`
	PrincipalClaim string        `koanf:"principalClaim"`
	GroupsClaim    string        `koanf:"groupsClaim"`
}

// Enabled reports whether JWTs are accepted.
func (j JWT) Enabled() bool { return j.Secret != "" || j.JWKSFile != "" }

// Principal is a principal id and its groups.
type Principal struct {
	ID     string   `koanf:"id"`
	Groups []string `koanf:"groups"`
}

// PolicyRule grants the principals it matches what it lists; see
// auth.Rule. Patterns use "*" for any run of characters; an empty list
// allows everything of its kind.
type PolicyRule struct {
	Principals []string `koanf:"principals"`
	Groups     []string `koanf:"groups"`
	Plugins    []string `koanf:"plugins"`
	Schemes    []string `koanf:"schemes"`
	Resources  []string `koanf:"resources"`
	Templates  []string `koanf:"templates"`
	Prompts    []string `koanf:"prompts"`
	Tools      []string `koanf:"tools"`
}

// authKeys are the schema keys of this file.
var authKeys = []string{
	"auth.tokens",
	"auth.jwt.secret", "auth.jwt.jwksFile", "auth.jwt.issuer", "auth.jwt.audience", "auth.jwt.leeway",
	"auth.jwt.principalClaim", "auth.jwt.groupsClaim",
	"auth.anonymous.id", "auth.anonymous.groups", "auth.stdio.id", "auth.stdio.groups",
	"auth.console.id", "auth.console.groups",
	"auth.resource", "auth.authorizationServers", "auth.completionRate", "auth.completionBurst",
	"auth.operator.principals", "auth.operator.groups",
	"policy",
}

// authListKeys are the keys of this file whose environment values are
// comma-separated lists.
var authListKeys = []string{"auth.anonymous.groups", "auth.stdio.groups", "auth.console.groups", "auth.authorizationServers",
	"auth.operator.principals", "auth.operator.groups"}

func authDefaults(m map[string]any) {
	m["auth.completionRate"] = 20.0
	m["auth.completionBurst"] = 40
	m["auth.jwt.leeway"] = "30s"
}

// validateAuth checks the auth and policy keys.
func validateAuth(cfg *Config, bad func(key, format string, args ...any)) {
	a := &cfg.Auth
	seen := map[string]bool{}
	for i, t := range a.Tokens {
		t.SHA256 = strings.ToLower(t.SHA256)
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != 32 {
			bad("auth.tokens", "token %d: sha256 must be 64 hex digits (the SHA-256 of the token, never the token)", i)
		}
		if t.Principal == "" {
			bad("auth.tokens", "token %d: principal is required", i)
		}
		if seen[t.SHA256] {
			bad("auth.tokens", "token %d: the same token twice", i)
		}
		seen[t.SHA256] = true
		a.Tokens[i] = t
	}
	if s := a.JWT.Secret; s != "" && len(s) < 32 {
		bad("auth.jwt.secret", "must be at least 32 bytes, got %d", len(s))
	}
	if f := a.JWT.JWKSFile; f != "" {
		if _, err := os.Stat(f); err != nil {
			bad("auth.jwt.jwksFile", "%v", err)
		}
	}
	if a.JWT.Leeway < 0 || a.JWT.Leeway > 10*time.Minute {
		bad("auth.jwt.leeway", "must be between 0 and 10m, got %v", a.JWT.Leeway)
	}
	if a.CompletionRate < 0 {
		bad("auth.completionRate", "must not be negative, got %v", a.CompletionRate)
	}
	if a.CompletionBurst < 1 {
		bad("auth.completionBurst", "must be at least 1, got %d", a.CompletionBurst)
	}
	for _, l := range [][]string{a.Operator.Principals, a.Operator.Groups} {
		for _, n := range l {
			if n == "" || n == "*" {
				bad("auth.operator", "want principal ids and group names, got %q (the role is never everyone's)", n)
			}
		}
	}
	if len(a.Operator.Principals)+len(a.Operator.Groups) > 0 && len(a.Tokens) == 0 && !a.JWT.Enabled() {
		bad("auth.operator", "needs auth.tokens or auth.jwt: without credentials every request is the same anonymous principal")
	}
	if an := a.Anonymous; an.ID != "" && (slices.Contains(a.Operator.Principals, an.ID) ||
		slices.ContainsFunc(an.Groups, func(g string) bool { return slices.Contains(a.Operator.Groups, g) })) {
		bad("auth.operator", "the anonymous principal %q would be an operator: anyone without a token would read the operator details", an.ID)
	}
	for i, r := range cfg.Policy {
		if len(r.Principals) == 0 && len(r.Groups) == 0 {
			bad("policy", "rule %d: needs principals or groups", i)
		}
		for _, l := range [][]string{r.Principals, r.Groups, r.Plugins, r.Schemes, r.Resources, r.Templates, r.Prompts, r.Tools} {
			for _, p := range l {
				if p == "" {
					bad("policy", "rule %d: empty pattern", i)
				}
			}
		}
	}
}

// AuthRequired reports whether HTTP requests without credentials are
// refused.
func (c *Config) AuthRequired() bool {
	return c.Auth.Anonymous.ID == "" && (len(c.Auth.Tokens) > 0 || c.Auth.JWT.Enabled())
}

// String hides secrets.
func (j JWT) String() string {
	return fmt.Sprintf("jwt(jwks=%q issuer=%q audience=%q secret=%v)", j.JWKSFile, j.Issuer, j.Audience, j.Secret != "")
}
