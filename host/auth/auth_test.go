package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

var (
	rsaPriv, _ = rsa.GenerateKey(rand.Reader, 2048)
	ecPriv, _  = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherEC, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	hmacSecret = []byte("0123456789abcdef0123456789abcdef")
)

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// writeJWKS writes a JWKS with the RSA key "r1" and the P-256 key "e1".
func writeJWKS(t *testing.T) string {
	t.Helper()
	pub, _ := ecPriv.PublicKey.Bytes() // 0x04 || X || Y
	doc := map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": "r1", "use": "sig", "alg": "RS256", "n": enc(rsaPriv.N.Bytes()), "e": enc(big.NewInt(int64(rsaPriv.E)).Bytes())},
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": enc(pub[1:33]), "y": enc(pub[33:])},
		{"kty": "oct", "kid": "ignored", "k": "c2VjcmV0"},
	}}
	b, _ := json.Marshal(doc)
	p := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sign(t *testing.T, m jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWT(t *testing.T) {
	a, err := New(Options{JWT: &JWTConfig{
		HMACSecret: hmacSecret, JWKSFile: writeJWKS(t), Issuer: "https://issuer.example", Audience: "corral",
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	good := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": "alice", "iss": "https://issuer.example", "aud": []string{"corral", "x"},
			"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "groups": []any{"staff", "dev", "staff"}}
	}
	with := func(k string, v any) jwt.MapClaims {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	alice := abi.Principal{ID: "alice", Groups: []string{"dev", "staff"}}
	tests := []struct {
		name  string
		token string
		want  *abi.Principal // nil: refused
	}{
		{"HS256", sign(t, jwt.SigningMethodHS256, "", hmacSecret, good()), &alice},
		{"RS256", sign(t, jwt.SigningMethodRS256, "r1", rsaPriv, good()), &alice},
		{"ES256", sign(t, jwt.SigningMethodES256, "e1", ecPriv, good()), &alice},
		{"ES256 no kid, one EC key", sign(t, jwt.SigningMethodES256, "", ecPriv, good()), &alice},
		{"groups as a string", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("groups", "staff dev")), &alice},
		{"ES256 unknown kid", sign(t, jwt.SigningMethodES256, "zz", ecPriv, good()), nil},
		{"ES256 wrong key", sign(t, jwt.SigningMethodES256, "e1", otherEC, good()), nil},
		{"HS256 wrong secret", sign(t, jwt.SigningMethodHS256, "", []byte("another-secret-another-secret-xx"), good()), nil},
		{"HS384 not allowed", sign(t, jwt.SigningMethodHS384, "", hmacSecret, good()), nil},
		{"alg none", sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, good()), nil},
		{"expired", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("exp", now.Add(-time.Minute).Unix())), nil},
		{"no exp", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("exp", nil)), nil},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("nbf", now.Add(time.Hour).Unix())), nil},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("iss", "https://evil.example")), nil},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("aud", "other")), nil},
		{"no subject", sign(t, jwt.SigningMethodHS256, "", hmacSecret, with("sub", nil)), nil},
		{"garbage", "a.b.c", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Token(tt.token)
			if tt.want == nil {
				if err == nil || !errors.Is(err, ErrInvalidToken) {
					t.Fatalf("Token = %v, %v; want ErrInvalidToken", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJWTCrit: a crit header (RFC 7515 §4.1.11) names extensions the
// verifier must understand; corral understands none, so every token that
// carries one is refused, validly signed or not, with the reason named.
func TestJWTCrit(t *testing.T) {
	a, err := New(Options{JWT: &JWTConfig{HMACSecret: hmacSecret}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tests := []struct {
		name   string
		header map[string]any // added to the signed header; nil: none
		want   string         // "" accepted, else a piece of the error
	}{
		{"no crit", nil, ""},
		{"other unknown header, not critical", map[string]any{"x-note": "hi"}, ""},
		{"unknown extension", map[string]any{"crit": []any{"exp"}, "exp": 1}, `unsupported extension "exp"`},
		{"b64 extension", map[string]any{"crit": []any{"b64"}, "b64": false}, `unsupported extension "b64"`},
		{"listed but absent", map[string]any{"crit": []any{"x-ext"}}, `unsupported extension "x-ext"`},
		{"empty array", map[string]any{"crit": []any{}}, "crit header is empty"},
		{"a string", map[string]any{"crit": "x-ext", "x-ext": 1}, "not an array"},
		{"null", map[string]any{"crit": nil}, "not an array"},
		{"an object", map[string]any{"crit": map[string]any{"x-ext": true}}, "not an array"},
		{"a number member", map[string]any{"crit": []any{7}}, "non-name"},
		{"an empty name", map[string]any{"crit": []any{""}}, "non-name"},
		{"standard alg", map[string]any{"crit": []any{"alg"}}, `standard parameter "alg"`},
		{"standard kid after an extension", map[string]any{"crit": []any{"x-ext", "kid"}, "x-ext": 1, "kid": "k"}, `standard parameter "kid"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": now.Add(time.Hour).Unix()})
			for k, v := range tt.header {
				tok.Header[k] = v
			}
			s, err := tok.SignedString(hmacSecret)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Token(s)
			if tt.want == "" {
				if err != nil || got.ID != "alice" {
					t.Fatalf("Token = %v, %v; want alice", got, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Token = %v, %v; want ErrInvalidToken with %q", got, err, tt.want)
			}
		})
	}
}

// TestJWTRepeatedMembers: a validly signed token whose header or claims
// set repeats a member (two "alg", two "sub", a repeated name deeper in)
// is refused; encoding/json would keep the last one, so a gateway that
// reads the first would authorize someone else.
func TestJWTRepeatedMembers(t *testing.T) {
	a, err := New(Options{JWT: &JWTConfig{HMACSecret: hmacSecret}})
	if err != nil {
		t.Fatal(err)
	}
	exp := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	hs := `{"alg":"HS256","typ":"JWT"}`
	tests := []struct {
		name           string
		header, claims string
		want           string // "" accepted as alice, else a piece of the error
	}{
		{"plain", hs, `{"sub":"alice","exp":` + exp + `}`, ""},
		{"unknown members", `{"alg":"HS256","x":1}`, `{"sub":"alice","exp":` + exp + `,"Sub":"bob"}`, ""},
		{"two sub", hs, `{"sub":"bob","sub":"alice","exp":` + exp + `}`, `claims: member "sub" is repeated`},
		{"sub escaped", hs, `{"sub":"bob","\u0073ub":"alice","exp":` + exp + `}`, `claims: member "sub" is repeated`},
		{"two exp", hs, `{"sub":"alice","exp":1,"exp":` + exp + `}`, `claims: member "exp" is repeated`},
		{"nested", hs, `{"sub":"alice","exp":` + exp + `,"cnf":{"k":1,"k":2}}`, `claims: member "k" is repeated`},
		{"in an array", hs, `{"sub":"alice","exp":` + exp + `,"l":[{"k":1,"k":2}]}`, `claims: member "k" is repeated`},
		{"two alg", `{"alg":"none","alg":"HS256"}`, `{"sub":"alice","exp":` + exp + `}`, `header: member "alg" is repeated`},
		{"two kid", `{"alg":"HS256","kid":"a","kid":"b"}`, `{"sub":"alice","exp":` + exp + `}`, `header: member "kid" is repeated`},
		{"invalid UTF-8", hs, `{"sub":"al` + "\xff" + `ice","exp":` + exp + `}`, "claims"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signing := enc([]byte(tt.header)) + "." + enc([]byte(tt.claims))
			mac, err := jwt.SigningMethodHS256.Sign(signing, hmacSecret)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Token(signing + "." + enc(mac))
			if tt.want == "" {
				if err != nil || got.ID != "alice" {
					t.Fatalf("Token = %v, %v; want alice", got, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Token = %v, %v; want ErrInvalidToken with %q", got, err, tt.want)
			}
		})
	}
}

func TestStaticTokensAndAnonymous(t *testing.T) {
	anon := abi.Principal{ID: "visitor", Groups: []string{"public"}}
	tests := []struct {
		name    string
		opts    Options
		header  []string
		want    string // principal id, "" refused
		wantErr error
	}{
		{"token", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, []string{"Bearer s3cret"}, "bob", nil},
		{"scheme is case-insensitive", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, []string{"bearer s3cret"}, "bob", nil},
		{"unknown token", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, []string{"Bearer nope"}, "", ErrInvalidToken},
		{"basic auth", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, []string{"Basic czNjcmV0"}, "", ErrInvalidToken},
		{"two headers", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, []string{"Bearer s3cret", "Bearer s3cret"}, "", ErrInvalidToken},
		{"no header, anonymous off", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}}, nil, "", ErrNoCredentials},
		{"no header, anonymous on", Options{Tokens: []StaticToken{{SHA256: HashToken("s3cret"), Principal: "bob"}}, Anonymous: &anon}, nil, "visitor", nil},
		{"nothing configured", Options{}, nil, "anonymous", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("POST", "/mcp", nil)
			for _, h := range tt.header {
				r.Header.Add("Authorization", h)
			}
			p, err := a.Authenticate(r)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || p.ID != tt.want {
				t.Fatalf("Authenticate = %v, %v; want %q", p, err, tt.want)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	bad := []Options{
		{Tokens: []StaticToken{{SHA256: "xyz", Principal: "a"}}},
		{Tokens: []StaticToken{{SHA256: HashToken("t"), Principal: ""}}},
		{Tokens: []StaticToken{{SHA256: HashToken("t"), Principal: "a"}, {SHA256: HashToken("t"), Principal: "b"}}},
		{JWT: &JWTConfig{HMACSecret: []byte("short")}},
		{JWT: &JWTConfig{}},
		{JWT: &JWTConfig{JWKSFile: "/nonexistent/jwks.json"}},
		{Anonymous: &abi.Principal{}},
	}
	for i, o := range bad {
		if _, err := New(o); err == nil {
			t.Errorf("options %d accepted", i)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "issues://a/b", true},
		{"issues://*", "issues://a/b", true},
		{"issues://*", "files://a", false},
		{"pub://docs/public-*", "pub://docs/public-1", true},
		{"pub://docs/public-*", "pub://docs/secret-1", false},
		{"*-1", "public-1", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"!", "anything", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestPolicyRulesDoNotCombine(t *testing.T) {
	pol, err := NewPolicy([]Rule{
		{Groups: []string{"g"}, Plugins: []string{"issues"}, Tools: []string{"create_issue"}},
		{Groups: []string{"g"}, Plugins: []string{"files"}, Tools: []string{"delete_file"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := pol.View(abi.Principal{ID: "x", Groups: []string{"g"}})
	tests := []struct {
		plugin, tool string
		want         bool
	}{
		{"issues", "create_issue", true},
		{"files", "delete_file", true},
		{"issues", "delete_file", false}, // one rule's plugin with another's tool
		{"other", "create_issue", false},
	}
	for _, tt := range tests {
		if got := v.Tool(tt.plugin, tt.tool); got != tt.want {
			t.Errorf("Tool(%s, %s) = %v, want %v", tt.plugin, tt.tool, got, tt.want)
		}
	}
	if pol.View(abi.Principal{ID: "y"}).Plugin("issues") {
		t.Error("a principal no rule matches sees a plugin")
	}
	if _, err := NewPolicy([]Rule{{Plugins: []string{"x"}}}); err == nil {
		t.Error("a rule matching nobody was accepted")
	}
}

// TestTemplateOnlyNarrows: what a view refuses with no template it
// refuses with every template, as catalog.View requires (the catalog asks
// without a template first and refuses a URI before matching any).
func TestTemplateOnlyNarrows(t *testing.T) {
	pol, err := NewPolicy([]Rule{
		{Principals: []string{"*"}, Plugins: []string{"issues"}, Schemes: []string{"issues"}, Resources: []string{"issues://7*"}},
		{Principals: []string{"*"}, Plugins: []string{"issues"}, Templates: []string{"issues://{number}"}, Resources: []string{"issues://1*"}},
		{Principals: []string{"*"}, Plugins: []string{"files"}, Templates: []string{"!"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := pol.View(abi.Principal{ID: "x"})
	visible := 0
	for _, plugin := range []string{"issues", "files", "other"} {
		for _, scheme := range []string{"issues", "repo", "file"} {
			for _, uri := range []string{"issues://7", "issues://12", "repo://a/b/issues/7", "file:///doc", "issues://9"} {
				for _, tmpl := range []string{"issues://{number}", "repo://{owner}/{repo}/issues/{number}", "file:///{+path}"} {
					if v.Resource(plugin, scheme, tmpl, uri) {
						visible++
						if !v.Resource(plugin, scheme, "", uri) {
							t.Errorf("Resource(%s, %s, %s, %s) is visible with the template, hidden without", plugin, scheme, tmpl, uri)
						}
					}
				}
			}
		}
	}
	if visible == 0 {
		t.Fatal("nothing visible: the test checks nothing")
	}
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(1, 2)
	l.now = func() time.Time { return now }
	a, b := abi.Principal{ID: "a"}, abi.Principal{ID: "b"}
	got := []bool{l.Allow(a), l.Allow(a), l.Allow(a), l.Allow(b)}
	if diff := cmp.Diff([]bool{true, true, false, true}, got); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
	now = now.Add(time.Second)
	if !l.Allow(a) {
		t.Error("a second later a is still refused")
	}
	var nilL *Limiter
	if !nilL.Allow(a) || NewLimiter(0, 1) != nil {
		t.Error("a nil limiter must allow everything")
	}
}

// TestTokensNeverLogged: refusals are logged without the token.
func TestTokensNeverLogged(t *testing.T) {
	var logs bytes.Buffer
	a, err := New(Options{
		Tokens: []StaticToken{{SHA256: HashToken("good-secret-token"), Principal: "p"}},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tok := range []string{"good-secret-token", "bad-secret-token", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if logs.Len() == 0 {
		t.Fatal("refusals were not logged at all")
	}
	for _, secret := range []string{"secret-token", "eyJ", "c2ln"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs.String())
		}
	}
}
