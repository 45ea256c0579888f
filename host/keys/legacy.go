package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
)

// Format 1, accepted for one release after format 2 replaced it and then
// deleted with this file: the signed-only list cursor (HMAC-SHA256 with the
// secret itself as the key, truncated) and the requestState sealed with
// AES-256-GCM under SHA-256 of the secret. Its secret was catalog.cursorKey
// (now an alias of keys.secret) for cursors, and catalog.Options.StateKey
// for requestState.

// VerifyV1 reports whether mac is the first len(mac) bytes of
// HMAC-SHA256(secret, body) for a secret of the ring: the signature of a
// format 1 cursor.
func (r *Ring) VerifyV1(body, mac []byte) bool {
	if len(mac) < 16 {
		return false
	}
	for _, s := range *r.keys.Load() {
		m := hmac.New(sha256.New, s.raw)
		m.Write(body)
		if hmac.Equal(m.Sum(nil)[:len(mac)], mac) {
			return true
		}
	}
	return false
}

// OpenV1 opens a format 1 requestState (nonce, ciphertext and tag, after
// base64) sealed with aad under a secret of the ring.
func (r *Ring) OpenV1(raw, aad []byte) ([]byte, bool) {
	for _, s := range *r.keys.Load() {
		key := sha256.Sum256(s.raw)
		block, err := aes.NewCipher(key[:])
		if err != nil {
			continue
		}
		g, err := cipher.NewGCM(block)
		if err != nil || len(raw) < g.NonceSize()+g.Overhead() {
			continue
		}
		if plain, err := g.Open(nil, raw[:g.NonceSize()], raw[g.NonceSize():], aad); err == nil {
			return plain, true
		}
	}
	return nil, false
}
