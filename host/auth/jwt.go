package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig configures JWT bearer tokens. At least one of HMACSecret and
// JWKSFile must be set.
type JWTConfig struct {
	// HMACSecret enables HS256 with this shared secret.
	HMACSecret []byte
	// JWKSFile is a JSON Web Key Set file (RFC 7517) whose RSA keys verify
	// RS256 and whose P-256 keys verify ES256.
	JWKSFile string
	// Issuer, when set, must equal the iss claim.
	Issuer string
	// Audience, when set, must be among the aud claim's values.
	Audience string
	// Leeway is the clock skew tolerated on exp, nbf and iat.
	Leeway time.Duration
	// PrincipalClaim names the claim holding the principal id (default "sub").
	PrincipalClaim string
	// GroupsClaim names the claim holding the groups, an array of strings
	// or one space-separated string (default "groups").
	GroupsClaim string
}

// jwtVerifier checks JWTs against its keys and claims.
type jwtVerifier struct {
	cfg     JWTConfig
	methods []string
	rsaKeys map[string]*rsa.PublicKey   // by kid ("" when the key has none)
	ecKeys  map[string]*ecdsa.PublicKey // by kid
	parser  *jwt.Parser
	now     func() time.Time
}

func newJWTVerifier(cfg JWTConfig) (*jwtVerifier, error) {
	if cfg.PrincipalClaim == "" {
		cfg.PrincipalClaim = "sub"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	v := &jwtVerifier{cfg: cfg, rsaKeys: map[string]*rsa.PublicKey{}, ecKeys: map[string]*ecdsa.PublicKey{}, now: time.Now}
	if len(cfg.HMACSecret) > 0 {
		if len(cfg.HMACSecret) < 32 {
			return nil, fmt.Errorf("auth: the JWT HMAC secret must be at least 32 bytes")
		}
		v.methods = append(v.methods, "HS256")
	}
	if cfg.JWKSFile != "" {
		b, err := os.ReadFile(cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("auth: read JWKS: %w", err)
		}
		if err := v.addJWKS(b); err != nil {
			return nil, err
		}
		if len(v.rsaKeys) > 0 {
			v.methods = append(v.methods, "RS256")
		}
		if len(v.ecKeys) > 0 {
			v.methods = append(v.methods, "ES256")
		}
	}
	if len(v.methods) == 0 {
		return nil, fmt.Errorf("auth: JWT needs an HMAC secret or a JWKS file with RSA or P-256 keys")
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(v.methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(func() time.Time { return v.now() }),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// jwk is one key of a JWKS.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// addJWKS parses a JWKS document, keeping the signature keys it can use.
func (v *jwtVerifier) addJWKS(b []byte) error {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return fmt.Errorf("auth: parse JWKS: %w", err)
	}
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Kty {
		case "RSA":
			if k.Alg != "" && k.Alg != "RS256" {
				continue
			}
			pub, err := rsaKey(k)
			if err != nil {
				return fmt.Errorf("auth: JWKS key %d: %w", i, err)
			}
			v.rsaKeys[k.Kid] = pub
		case "EC":
			if k.Crv != "P-256" || (k.Alg != "" && k.Alg != "ES256") {
				continue
			}
			pub, err := ecKey(k)
			if err != nil {
				return fmt.Errorf("auth: JWKS key %d: %w", i, err)
			}
			v.ecKeys[k.Kid] = pub
		}
	}
	return nil
}

func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func rsaKey(k jwk) (*rsa.PublicKey, error) {
	n, err := b64(k.N)
	if err != nil || len(n) == 0 {
		return nil, fmt.Errorf("bad RSA modulus")
	}
	e, err := b64(k.E)
	if err != nil || len(e) == 0 || len(e) > 4 {
		return nil, fmt.Errorf("bad RSA exponent")
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	if pub.N.BitLen() < 2048 {
		return nil, fmt.Errorf("RSA key shorter than 2048 bits")
	}
	return pub, nil
}

func ecKey(k jwk) (*ecdsa.PublicKey, error) {
	x, err1 := b64(k.X)
	y, err2 := b64(k.Y)
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		return nil, fmt.Errorf("bad P-256 coordinates")
	}
	pt := append(append([]byte{4}, x...), y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
	if err != nil {
		return nil, fmt.Errorf("P-256 point: %w", err)
	}
	return pub, nil
}

// jwsHeaders are the header parameters RFC 7515 §4.1 defines; a crit
// header must not list them (§4.1.11).
var jwsHeaders = []string{"alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit"}

// checkCrit enforces RFC 7515 §4.1.11. corral understands no header
// extension, so a token whose crit header is present is refused: a
// well-formed one names an extension the verifier cannot honour, and a
// malformed one (not an array, empty, a non-string member, a standard
// parameter) is invalid on its own.
func checkCrit(h map[string]any) error {
	c, ok := h["crit"]
	if !ok {
		return nil
	}
	list, ok := c.([]any)
	switch {
	case !ok:
		return fmt.Errorf("auth: jwt: crit header is not an array")
	case len(list) == 0:
		return fmt.Errorf("auth: jwt: crit header is empty")
	}
	for _, x := range list {
		name, ok := x.(string)
		switch {
		case !ok || name == "":
			return fmt.Errorf("auth: jwt: crit header holds a non-name")
		case slices.Contains(jwsHeaders, name):
			return fmt.Errorf("auth: jwt: crit header lists the standard parameter %q", name)
		}
	}
	return fmt.Errorf("auth: jwt: crit header names the unsupported extension %q", list[0])
}

// key finds the verification key for a token's header, after refusing a
// header that demands an extension (crit).
func (v *jwtVerifier) key(t *jwt.Token) (any, error) {
	if err := checkCrit(t.Header); err != nil {
		return nil, err
	}
	kid, _ := t.Header["kid"].(string)
	switch t.Method.Alg() {
	case "HS256":
		return v.cfg.HMACSecret, nil
	case "RS256":
		return pick(v.rsaKeys, kid)
	case "ES256":
		return pick(v.ecKeys, kid)
	}
	return nil, fmt.Errorf("auth: unexpected signing method")
}

// pick returns the key named kid, or the only key when the token names
// none.
func pick[K any](keys map[string]K, kid string) (K, error) {
	var zero K
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	if kid == "" && len(keys) == 1 {
		for _, k := range keys {
			return k, nil
		}
	}
	return zero, fmt.Errorf("auth: no key %q", kid)
}

// strictSegments refuses a token whose header or claims set repeats a
// member name in any object, or is not valid UTF-8 JSON (RFC 7515 §4 and
// RFC 7519 §4 let a parser refuse a repeated name, and the JWT library,
// reading with encoding/json, would keep the last: a gateway reading the
// first "sub" or "alg" and corral would disagree). A segment that is not
// base64url is left to the parser, which refuses it.
func strictSegments(token string) error {
	parts := strings.SplitN(token, ".", 3)
	if len(parts) != 3 {
		return nil
	}
	for i, what := range [2]string{"header", "claims"} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			continue
		}
		if err := jsonread.CheckUnique(b); err != nil {
			return fmt.Errorf("auth: jwt: %s: %w", what, err)
		}
	}
	return nil
}

var errNoPrincipal = errors.New("auth: token names no principal")

// verify checks token and returns its principal.
func (v *jwtVerifier) verify(token string) (abi.Principal, error) {
	if err := strictSegments(token); err != nil {
		return abi.Principal{}, err
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.key); err != nil {
		return abi.Principal{}, fmt.Errorf("auth: jwt: %w", err)
	}
	id, _ := claims[v.cfg.PrincipalClaim].(string)
	if id == "" {
		return abi.Principal{}, errNoPrincipal
	}
	p := abi.Principal{ID: id}
	switch g := claims[v.cfg.GroupsClaim].(type) {
	case string:
		p.Groups = strings.Fields(g)
	case []any:
		for _, x := range g {
			if s, ok := x.(string); ok && s != "" {
				p.Groups = append(p.Groups, s)
			}
		}
	}
	slices.Sort(p.Groups)
	p.Groups = slices.Compact(p.Groups)
	return p, nil
}
