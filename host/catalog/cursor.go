package catalog

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// position is where a merged list resumes: which list, in which Set, at
// which provider, and where inside that provider (an offset into its
// static items, or the provider's own opaque cursor once past them).
type position struct {
	gen      uint64   // Set generation the cursor belongs to
	kind     ListKind // which list
	provider uint32   // index into the Set's providers
	offset   uint32   // static items already listed for this provider
	dynamic  bool     // past the static items: inner is the provider's cursor
	inner    string   // the provider's own cursor
}

// Cursor wire format (before base64url): version byte 1, kind byte, flags
// byte (bit 0: dynamic), uvarint provider, uvarint offset, 8-byte
// generation, the provider cursor, then 16 bytes of HMAC-SHA256 over all
// of that. RATIONALE.md explains the choice.
const (
	cursorVersion = 1
	macLen        = 16
	// maxInnerCursor bounds a provider's own cursor.
	maxInnerCursor = 1024
)

var errBadCursor = errors.New("cursor: malformed or forged")

func (s *Set) encodeCursor(p position) string {
	b := make([]byte, 0, 32+len(p.inner)+macLen)
	b = append(b, cursorVersion, byte(p.kind), 0)
	if p.dynamic {
		b[2] = 1
	}
	b = binary.AppendUvarint(b, uint64(p.provider))
	b = binary.AppendUvarint(b, uint64(p.offset))
	b = binary.BigEndian.AppendUint64(b, p.gen)
	b = append(b, p.inner...)
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	b = m.Sum(b)[:len(b)+macLen]
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Set) decodeCursor(c string) (position, error) {
	var p position
	if len(c) > 2*maxInnerCursor {
		return p, errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 3+2+8+macLen {
		return p, errBadCursor
	}
	// The decoder skips CR and LF; only the canonical encoding of a
	// signed cursor is that cursor (found by FuzzDecodeCursor).
	if base64.RawURLEncoding.EncodeToString(b) != c {
		return p, errBadCursor
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:macLen], mac) {
		return p, errBadCursor
	}
	if body[0] != cursorVersion || body[2] > 1 {
		return p, errBadCursor
	}
	p.kind = ListKind(body[1])
	p.dynamic = body[2] == 1
	rest := body[3:]
	prov, n := binary.Uvarint(rest)
	if n <= 0 || prov > 1<<31 {
		return p, errBadCursor
	}
	rest = rest[n:]
	off, n := binary.Uvarint(rest)
	if n <= 0 || off > 1<<31 {
		return p, errBadCursor
	}
	rest = rest[n:]
	if len(rest) < 8 {
		return p, errBadCursor
	}
	p.provider, p.offset = uint32(prov), uint32(off)
	p.gen = binary.BigEndian.Uint64(rest)
	p.inner = string(rest[8:])
	return p, nil
}
