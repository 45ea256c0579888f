package keys

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

var (
	oldSecret = []byte("the secret before the rotation, 32+ bytes")
	newSecret = []byte("the secret after the rotation, 32+ bytes!")
	plain     = []byte("0:zzpriv-dir/zzpriv-plan-2.txt")
)

func mustRing(t testing.TB, cur, prev []byte) *Ring {
	t.Helper()
	r, err := New(cur, prev)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpen(t *testing.T) {
	r := mustRing(t, oldSecret, nil)
	tok := r.Seal(Cursor, plain)
	got, err := r.Open(Cursor, tok)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	if len(raw) != len(plain)+Overhead || raw[0] != Version {
		t.Errorf("token of %d bytes starting %d, want %d starting %d", len(raw), raw[0], len(plain)+Overhead, Version)
	}
	// Confidential: nothing of the plaintext shows, whatever the framing.
	for _, piece := range []string{"zzpriv", "plan-2", "priv"} {
		if bytes.Contains(raw, []byte(piece)) || strings.Contains(tok, piece) {
			t.Errorf("token shows %q", piece)
		}
	}
	if r.Seal(Cursor, plain) == tok {
		t.Error("two seals of one plaintext are the same token (nonce reused?)")
	}
	// Replicas sharing the secret open each other's tokens.
	if _, err := mustRing(t, oldSecret, nil).Open(Cursor, tok); err != nil {
		t.Errorf("replica: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	r := mustRing(t, newSecret, oldSecret)
	tok := r.Seal(Cursor, plain)
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	enc := base64.RawURLEncoding.EncodeToString
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		return enc(b)
	}
	// A token whose last character carries padding bits: the same bytes
	// spelled another way.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", tok[len(tok)-1])
	var respelled string
	if len(raw)%3 != 0 {
		respelled = tok[:len(tok)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last^1])
	}
	unknown := mustRing(t, []byte("a third secret nobody here holds, 32+"), nil).Seal(Cursor, plain)
	tests := []struct {
		name, token string
		purpose     Purpose
		want        error
	}{
		{"empty", "", Cursor, ErrMalformed},
		{"not base64", "not a token!", Cursor, ErrMalformed},
		{"truncated", tok[:len(tok)-4], Cursor, ErrMalformed},
		{"header only", enc(raw[:headerLen]), Cursor, ErrMalformed},
		{"version altered", flip(0), Cursor, ErrMalformed},
		{"format 1 version byte", enc(append([]byte{1}, raw[1:]...)), Cursor, ErrMalformed},
		{"key id altered", flip(2), Cursor, ErrUnknownKey},
		{"nonce altered", flip(headerLen + 3), Cursor, ErrMalformed},
		{"ciphertext altered", flip(headerLen + nonceLen + 2), Cursor, ErrMalformed},
		{"tag altered", flip(len(raw) - 1), Cursor, ErrMalformed},
		{"line break inside", tok[:5] + "\n" + tok[5:], Cursor, ErrMalformed},
		{"another purpose", tok, RequestState, ErrMalformed},
		{"unknown key", unknown, Cursor, ErrUnknownKey},
	}
	if respelled != "" {
		tests = append(tests, struct {
			name, token string
			purpose     Purpose
			want        error
		}{"padding bits set", respelled, Cursor, ErrMalformed})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Open(tt.purpose, tt.token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open = %q, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestRotation: a token sealed under the old secret opens while the ring
// keeps that secret as the previous one, and is refused as from an unknown
// key once it is dropped; new tokens are sealed under the new secret.
func TestRotation(t *testing.T) {
	r := mustRing(t, oldSecret, nil)
	before := r.Seal(RequestState, plain)
	if err := r.Update(newSecret, oldSecret); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Open(RequestState, before); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("after rotation: %q, %v", got, err)
	}
	after := r.Seal(RequestState, plain)
	if _, err := mustRing(t, newSecret, nil).Open(RequestState, after); err != nil {
		t.Errorf("a new token is not sealed under the new secret: %v", err)
	}
	if err := r.Update(newSecret, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open(RequestState, before); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old secret dropped: %v, want ErrUnknownKey", err)
	}
	if err := r.Update([]byte("short"), nil); err == nil {
		t.Error("a short secret accepted")
	}
	if _, err := r.Open(RequestState, after); err != nil {
		t.Errorf("a failed Update changed the ring: %v", err)
	}
}

func TestRandomSecret(t *testing.T) {
	a, b := mustRing(t, nil, nil), mustRing(t, nil, nil)
	tok := a.Seal(Cursor, plain)
	if _, err := b.Open(Cursor, tok); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("another process's random secret opened the token: %v", err)
	}
	// Configuring a secret and removing it again comes back to the same
	// random secret, so tokens of the process stay valid.
	if err := a.Update(newSecret, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Open(Cursor, tok); err != nil {
		t.Errorf("back to the random secret: %v", err)
	}
}

// TestFormat1 opens tokens minted the way corral minted them before key
// rings: a cursor signed with HMAC-SHA256 under the secret (truncated to
// 16 bytes) and a requestState sealed with AES-256-GCM under SHA-256 of
// the secret.
func TestFormat1(t *testing.T) {
	r := mustRing(t, newSecret, oldSecret)
	body := []byte{1, 1, 1, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 'x'}
	m := hmac.New(sha256.New, oldSecret)
	m.Write(body)
	mac := m.Sum(nil)[:16]
	if !r.VerifyV1(body, mac) {
		t.Error("a format 1 cursor signature under the previous secret refused")
	}
	bad := bytes.Clone(mac)
	bad[0] ^= 1
	if r.VerifyV1(body, bad) || r.VerifyV1(body, mac[:8]) || mustRing(t, nil, nil).VerifyV1(body, mac) {
		t.Error("a wrong format 1 signature accepted")
	}

	aad := []byte("corral requestState v1")
	key := sha256.Sum256(oldSecret)
	block, _ := aes.NewCipher(key[:])
	g, _ := cipher.NewGCM(block)
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	sealed := g.Seal(nonce, nonce, plain, aad)
	if got, ok := r.OpenV1(sealed, aad); !ok || !bytes.Equal(got, plain) {
		t.Errorf("format 1 state: %q, %v", got, ok)
	}
	sealed[len(sealed)-1] ^= 1
	if _, ok := r.OpenV1(sealed, aad); ok {
		t.Error("an altered format 1 state opened")
	}
}

// FuzzOpen: opening never panics, and what opens is a plaintext the ring
// sealed, spelled exactly as Seal spells it (forging or respelling a token
// would need the key). Tokens are random, so the seeds are compared by
// what they hold, not by their bytes.
func FuzzOpen(f *testing.F) {
	r := mustRing(f, newSecret, oldSecret)
	sealed := [][]byte{{}, plain, bytes.Repeat([]byte{0}, 40)}
	for _, p := range sealed {
		tok := r.Seal(Cursor, p)
		f.Add(tok)
		f.Add(tok[:len(tok)-1] + "A")
		f.Add(tok[:4] + "\r\n" + tok[4:])
	}
	f.Add("")
	f.Add("AgAAAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := r.Open(Cursor, tok)
		if err != nil {
			return
		}
		raw, _ := base64.RawURLEncoding.DecodeString(tok)
		if base64.RawURLEncoding.EncodeToString(raw) != tok {
			t.Fatalf("opened %q, another spelling of a token", tok)
		}
		for _, p := range sealed {
			if bytes.Equal(got, p) {
				return
			}
		}
		t.Fatalf("opened %q to %q, which the ring never sealed", tok, got)
	})
}

func BenchmarkSealOpen(b *testing.B) {
	r := mustRing(b, newSecret, oldSecret)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Open(Cursor, r.Seal(Cursor, plain)); err != nil {
			b.Fatal(err)
		}
	}
}
