package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// Purpose says what a token is for. Each purpose has its own key, so a
// token minted for one purpose never opens as another.
type Purpose uint8

// The purposes of corral's tokens.
const (
	// Cursor seals list cursors (host/catalog).
	Cursor Purpose = iota
	// RequestState seals input_required requestState (host/catalog).
	RequestState
	// Session seals 2025-11-25 Mcp-Session-Id tokens (host/session).
	Session
	numPurposes
)

// info is the HKDF info string of each purpose's key.
var info = [numPurposes]string{
	Cursor:       "corral cursor v2",
	RequestState: "corral requestState v2",
	Session:      "corral session v2",
}

// Version is the format byte that starts every token. Format 1 was the
// signed-only cursor and the requestState sealed under SHA-256 of a key;
// they are still opened for one release (legacy.go).
const Version = 2

// MinSecret is the shortest secret a Ring accepts, in bytes (128 bits;
// corral's configuration asks 32 of keys.secret, 16 of the older
// catalog.cursorKey).
const MinSecret = 16

const (
	idLen     = 4
	headerLen = 1 + idLen
	nonceLen  = 12
	tagLen    = 16
	// Overhead is how many bytes sealing adds to a plaintext, before
	// base64.
	Overhead = headerLen + nonceLen + tagLen
)

var (
	// ErrMalformed: the token is not one this ring's format can hold, or
	// it was altered or forged.
	ErrMalformed = errors.New("keys: token is malformed, altered or forged")
	// ErrUnknownKey: the token names a key the ring does not hold (sealed
	// before a rotation that has since dropped the key, or by another
	// deployment).
	ErrUnknownKey = errors.New("keys: token was sealed under a key this server no longer holds")
)

// strict refuses non-zero padding bits, so one token has one spelling.
var strict = base64.RawURLEncoding.Strict()

// secret is one secret of the ring with its derived keys.
type secret struct {
	id   [idLen]byte
	raw  []byte // for format 1 (legacy.go)
	aead [numPurposes]cipher.AEAD
}

// ring is an immutable snapshot: the current secret, then the previous
// one if any.
type ring []*secret

// Ring is the key ring. It is safe for concurrent use; Update swaps its
// secrets atomically, so tokens sealed or opened at the same moment see
// either the old ring or the new one.
type Ring struct {
	keys   atomic.Pointer[ring]
	random []byte // the secret used when none is configured
}

// New returns a Ring whose current secret is current and whose previous
// secret is previous (nil: none). A nil current is a random secret made
// for this Ring.
func New(current, previous []byte) (*Ring, error) {
	r := &Ring{random: make([]byte, 32)}
	rand.Read(r.random)
	if err := r.Update(current, previous); err != nil {
		return nil, err
	}
	return r, nil
}

// Update replaces the ring's secrets, as New sets them (a nil current is
// the Ring's own random secret). A secret shorter than MinSecret is an
// error and leaves the ring as it was.
func (r *Ring) Update(current, previous []byte) error {
	if current == nil {
		current = r.random
	}
	cur, err := derive(current)
	if err != nil {
		return fmt.Errorf("keys: current secret: %w", err)
	}
	next := ring{cur}
	if previous != nil {
		prev, err := derive(previous)
		if err != nil {
			return fmt.Errorf("keys: previous secret: %w", err)
		}
		next = append(next, prev)
	}
	r.keys.Store(&next)
	return nil
}

// derive computes a secret's key id and per-purpose keys.
func derive(raw []byte) (*secret, error) {
	if len(raw) < MinSecret {
		return nil, fmt.Errorf("want at least %d bytes, got %d", MinSecret, len(raw))
	}
	s := &secret{raw: raw}
	id, err := hkdf.Key(sha256.New, raw, nil, "corral key id", idLen)
	if err != nil {
		return nil, err
	}
	copy(s.id[:], id)
	for p := range numPurposes {
		k, err := hkdf.Key(sha256.New, raw, nil, info[p], 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		if s.aead[p], err = cipher.NewGCMWithRandomNonce(block); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Seal returns plain sealed for p under the current secret.
func (r *Ring) Seal(p Purpose, plain []byte) string {
	cur := (*r.keys.Load())[0]
	var head [headerLen]byte
	head[0] = Version
	copy(head[1:], cur.id[:])
	b := make([]byte, headerLen, Overhead+len(plain))
	copy(b, head[:])
	b = cur.aead[p].Seal(b, nil, plain, head[:])
	return base64.RawURLEncoding.EncodeToString(b)
}

// Open returns the plaintext of a token sealed for p by Seal under a
// secret the ring holds: ErrUnknownKey when it names no such secret, else
// ErrMalformed for anything that is not such a token, byte for byte.
func (r *Ring) Open(p Purpose, token string) ([]byte, error) {
	// The decoder skips CR and LF; only the token itself is the token.
	if strings.ContainsAny(token, "\r\n") {
		return nil, ErrMalformed
	}
	raw, err := strict.DecodeString(token)
	if err != nil || len(raw) < Overhead || raw[0] != Version {
		return nil, ErrMalformed
	}
	known := false
	for _, s := range *r.keys.Load() {
		if [idLen]byte(raw[1:headerLen]) != s.id {
			continue
		}
		known = true
		if plain, err := s.aead[p].Open(nil, nil, raw[headerLen:], raw[:headerLen]); err == nil {
			return plain, nil
		}
	}
	if !known {
		return nil, ErrUnknownKey
	}
	return nil, ErrMalformed
}
