// Package keys is corral's key ring. Every token corral hands a client and
// must later trust again (list cursors, input_required requestState, 2025-11-25
// session ids) is sealed with AES-256-GCM under a key derived with
// HKDF-SHA256 (RFC 5869) from one secret, a separate key per [Purpose]. A
// [Ring] holds the current secret and, during a rotation, the previous
// one: tokens are always sealed under the current secret and open under
// either, so a secret can be rotated without breaking a listing in flight.
//
// A token is base64url (no padding) of
//
//	version (1 byte, [Version]) | key id (4 bytes) | nonce (12) | ciphertext | tag (16)
//
// where the key id names the secret (replicas sharing a secret share its
// id) and the first five bytes are authenticated as additional data. Its
// contents are confidential as well as tamper-evident: a client learns
// nothing from a token but its length.
//
// Without a configured secret a Ring makes a random one, valid for the
// life of the Ring (the process, in corral serve).
package keys
