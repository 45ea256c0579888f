package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// StaticToken is a bearer token the operator configured, stored only as the
// SHA-256 of the token.
type StaticToken struct {
	// SHA256 is the lowercase hex SHA-256 of the token.
	SHA256 string
	// Principal is the principal id the token stands for.
	Principal string
	// Groups are the principal's groups.
	Groups []string
}

// HashToken returns the lowercase hex SHA-256 of token, the form in which
// static tokens are configured.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// staticTokens looks tokens up by hash in constant time.
type staticTokens struct {
	hashes [][sha256.Size]byte
	who    []abi.Principal
}

func newStaticTokens(ts []StaticToken) (*staticTokens, error) {
	st := &staticTokens{}
	for i, t := range ts {
		b, err := hex.DecodeString(strings.ToLower(t.SHA256))
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("auth: token %d: sha256 must be 64 hex digits", i)
		}
		if t.Principal == "" {
			return nil, fmt.Errorf("auth: token %d: no principal", i)
		}
		var h [sha256.Size]byte
		copy(h[:], b)
		for j, other := range st.hashes {
			if other == h {
				return nil, fmt.Errorf("auth: tokens %d and %d are the same token", j, i)
			}
		}
		st.hashes = append(st.hashes, h)
		st.who = append(st.who, abi.Principal{ID: t.Principal, Groups: append([]string(nil), t.Groups...)})
	}
	return st, nil
}

// lookup returns the principal of token. It compares the token's hash with
// every configured hash, so the time taken does not depend on which (or
// whether any) token matched.
func (st *staticTokens) lookup(token string) (abi.Principal, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range st.hashes {
		if subtle.ConstantTimeCompare(sum[:], st.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return abi.Principal{}, false
	}
	return clonePrincipal(st.who[found]), true
}

func clonePrincipal(p abi.Principal) abi.Principal {
	return abi.Principal{ID: p.ID, Groups: append([]string(nil), p.Groups...)}
}
