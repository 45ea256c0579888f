package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAuthAndPolicy(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		yaml    string
		env     []string
		check   func(t *testing.T, c *Config)
		wantErr string
	}{
		{
			name: "tokens, jwt, policy",
			yaml: `
auth:
  tokens:
    - {sha256: ` + strings.ToUpper(hash) + `, principal: alice, groups: [staff]}
  jwt: {issuer: https://id.example, audience: corral}
  stdio: {id: me, groups: [dev]}
policy:
  - groups: [staff]
  - principals: ["*"]
    plugins: [files]
    tools: ["!"]
`,
			env: []string{"CORRAL_AUTH_JWT_SECRET=" + strings.Repeat("s", 32), "CORRAL_AUTH_ANONYMOUS_GROUPS=a,b"},
			check: func(t *testing.T, c *Config) {
				want := []Token{{SHA256: hash, Principal: "alice", Groups: []string{"staff"}}}
				if diff := cmp.Diff(want, c.Auth.Tokens); diff != "" {
					t.Errorf("tokens (-want +got):\n%s", diff)
				}
				wantP := []PolicyRule{{Groups: []string{"staff"}}, {Principals: []string{"*"}, Plugins: []string{"files"}, Tools: []string{"!"}}}
				if diff := cmp.Diff(wantP, c.Policy); diff != "" {
					t.Errorf("policy (-want +got):\n%s", diff)
				}
				if !c.Auth.JWT.Enabled() || c.Auth.JWT.Issuer != "https://id.example" || !c.AuthRequired() {
					t.Errorf("jwt %v, required %v", c.Auth.JWT, c.AuthRequired())
				}
				if diff := cmp.Diff(Principal{ID: "me", Groups: []string{"dev"}}, c.Auth.Stdio); diff != "" {
					t.Errorf("stdio principal (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"a", "b"}, c.Auth.Anonymous.Groups); diff != "" {
					t.Errorf("anonymous groups (-want +got):\n%s", diff)
				}
				if strings.Contains(c.Auth.JWT.String(), "ssss") {
					t.Error("JWT.String shows the secret")
				}
			},
		},
		{name: "plaintext token", yaml: "auth:\n  tokens: [{sha256: hunter2, principal: a}]\n", wantErr: "auth.tokens"},
		{name: "token without principal", yaml: "auth:\n  tokens: [{sha256: " + hash + "}]\n", wantErr: "principal is required"},
		{name: "short secret", yaml: "auth:\n  jwt: {secret: short}\n", wantErr: "auth.jwt.secret"},
		{name: "rule for nobody", yaml: "policy:\n  - plugins: [x]\n", wantErr: "needs principals or groups"},
		{name: "negative rate", yaml: "auth:\n  completionRate: -1\n", wantErr: "auth.completionRate"},
		{name: "operator role", yaml: "auth:\n  tokens: [{sha256: " + hash + ", principal: ops}]\n  operator: {principals: [ops]}\n", env: []string{"CORRAL_AUTH_OPERATOR_GROUPS=sre, oncall"},
			check: func(t *testing.T, c *Config) {
				if diff := cmp.Diff(Operator{Principals: []string{"ops"}, Groups: []string{"sre", "oncall"}}, c.Auth.Operator); diff != "" {
					t.Errorf("operator (-want +got):\n%s", diff)
				}
			}},
		{name: "operator everyone", yaml: "auth:\n  tokens: [{sha256: " + hash + ", principal: ops}]\n  operator: {principals: [\"*\"]}\n", wantErr: "the role is never everyone's"},
		{name: "operator without credentials", yaml: "auth:\n  operator: {principals: [anonymous]}\n", wantErr: "auth.operator: needs auth.tokens or auth.jwt"},
		{name: "anonymous operator", yaml: "auth:\n  tokens: [{sha256: " + hash + ", principal: ops}]\n  anonymous: {id: guest, groups: [sre]}\n  operator: {groups: [sre]}\n",
			wantErr: `the anonymous principal "guest" would be an operator`},
		{name: "defaults", yaml: "log: {level: info}\n", check: func(t *testing.T, c *Config) {
			if c.AuthRequired() || c.Auth.CompletionRate != 20 || c.Auth.CompletionBurst != 40 || len(c.Policy) != 0 {
				t.Errorf("defaults: %+v", c.Auth)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(f, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(Source{File: f, Environ: append([]string{}, tt.env...)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
