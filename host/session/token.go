package session

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/host/keys"
)

// idLen and ownerLen are the sizes of a Token's id and owner digest.
const (
	idLen    = 16
	ownerLen = 16
	// maxVersion bounds the protocol version a token carries.
	maxVersion = 32
)

// MaxTokenLen is the longest Mcp-Session-Id OpenToken considers. A token
// for a version of 10 characters ("2025-11-25") is 76 bytes sealed, 102
// characters of base64url (TestToken).
const MaxTokenLen = (idLen+ownerLen+1+maxVersion+keys.Overhead)*4/3 + 1

// ErrToken is why an Mcp-Session-Id was refused: it is not a token this
// deployment sealed, or it was altered.
var ErrToken = errors.New("session: not a session id of this server")

// Token is what an Mcp-Session-Id carries: the session's id (its record's
// key in the Store), a digest of the principal that opened it and the
// protocol version initialize negotiated.
type Token struct {
	// ID is 32 hex digits of 128 random bits.
	ID      string
	owner   [ownerLen]byte
	Version string
}

// NewToken returns a token for a new session of principal owner; its
// Version is set once initialize has negotiated it.
func NewToken(owner string) (Token, error) {
	var id [idLen]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Token{}, fmt.Errorf("session: id: %w", err)
	}
	return Token{ID: hex.EncodeToString(id[:]), owner: ownerDigest(owner)}, nil
}

// ownerDigest names a principal in a token without spelling it out: a
// principal id can be long (an e-mail address, a URL), the header should
// not be.
func ownerDigest(principal string) [ownerLen]byte {
	sum := sha256.Sum256([]byte(principal))
	return [ownerLen]byte(sum[:ownerLen])
}

// OwnedBy reports whether principal opened the session.
func (t Token) OwnedBy(principal string) bool {
	d := ownerDigest(principal)
	return subtle.ConstantTimeCompare(d[:], t.owner[:]) == 1
}

// Seal returns the token as an Mcp-Session-Id sealed with r (a Version
// longer than 32 bytes is cut there):
//
//	id (16 bytes) | owner digest (16) | version length (1) | version
//
// sealed for keys.Session (the ring adds keys.Overhead bytes), in
// base64url.
func (t Token) Seal(r *keys.Ring) string {
	v := t.Version[:min(len(t.Version), maxVersion)]
	b := make([]byte, 0, idLen+ownerLen+1+len(v))
	id, _ := hex.DecodeString(t.ID) // minted by NewToken or OpenToken: valid hex
	b = append(b, id...)
	b = append(b, t.owner[:]...)
	b = append(b, byte(len(v)))
	b = append(b, v...)
	return r.Seal(keys.Session, b)
}

// OpenToken opens an Mcp-Session-Id sealed by Token.Seal under a secret
// of r. Anything else is ErrToken.
func OpenToken(r *keys.Ring, s string) (Token, error) {
	if len(s) > MaxTokenLen {
		return Token{}, ErrToken
	}
	b, err := r.Open(keys.Session, s)
	if err != nil {
		return Token{}, fmt.Errorf("%w: %w", ErrToken, err)
	}
	if len(b) < idLen+ownerLen+2 || int(b[idLen+ownerLen]) != len(b)-idLen-ownerLen-1 {
		return Token{}, ErrToken
	}
	return Token{
		ID:      hex.EncodeToString(b[:idLen]),
		owner:   [ownerLen]byte(b[idLen : idLen+ownerLen]),
		Version: string(b[idLen+ownerLen+1:]),
	}, nil
}
