package catalog

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/corral-mcp/corral/host/keys"
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

// A cursor is the position sealed by the Set's key ring (host/keys, purpose
// keys.Cursor), so a client can neither alter it nor read it: it carries a
// provider's own cursor, which may name what the client may not see. The
// plaintext is the kind byte, a flags byte (bit 0: dynamic), uvarint
// provider, uvarint offset, the 8-byte generation, then the provider's
// cursor. RATIONALE.md explains the choice.
const (
	// maxInnerCursor bounds a provider's own cursor.
	maxInnerCursor = 1024
	// maxCursor bounds a cursor a client sends: the longest one minted
	// (two bytes of flags, two 5-byte uvarints, the generation, the
	// provider's cursor, the seal) in base64.
	maxCursor = (2+10+8+maxInnerCursor+keys.Overhead)*4/3 + 4
)

var errBadCursor = errors.New("cursor: malformed or forged")

func (s *Set) encodeCursor(p position) string {
	var buf [64]byte
	b := append(buf[:0], byte(p.kind), 0)
	if p.dynamic {
		b[1] = 1
	}
	b = binary.AppendUvarint(b, uint64(p.provider))
	b = binary.AppendUvarint(b, uint64(p.offset))
	b = binary.BigEndian.AppendUint64(b, p.gen)
	b = append(b, p.inner...)
	return s.keys.Seal(keys.Cursor, b)
}

// decodeCursor opens a cursor the Set's ring sealed (or, for one release,
// a signed cursor of format 1) and returns its position.
func (s *Set) decodeCursor(c string) (position, error) {
	if len(c) > maxCursor {
		return position{}, errBadCursor
	}
	plain, err := s.keys.Open(keys.Cursor, c)
	switch {
	case errors.Is(err, keys.ErrMalformed):
		if plain, ok := s.openV1Cursor(c); ok {
			return parsePosition(plain)
		}
		return position{}, errBadCursor
	case err != nil:
		return position{}, fmt.Errorf("cursor: %w", err)
	}
	return parsePosition(plain)
}

// openV1Cursor verifies a cursor of format 1, base64url(1, the plaintext,
// HMAC-SHA256[:16]), and returns its plaintext. Delete it one release
// after format 2.
func (s *Set) openV1Cursor(c string) ([]byte, bool) {
	const macLen = 16
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || strings.ContainsAny(c, "\r\n") || len(b) < 1+macLen || b[0] != 1 {
		return nil, false
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	if !s.keys.VerifyV1(body, mac) {
		return nil, false
	}
	return body[1:], true
}

func parsePosition(b []byte) (position, error) {
	var p position
	if len(b) < 2+2+8 || b[1] > 1 {
		return p, errBadCursor
	}
	p.kind = ListKind(b[0])
	p.dynamic = b[1] == 1
	rest := b[2:]
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

// processKeys is the ring of Sets built without Options.Keys: one random
// secret for the process, so that a new Set of the same plugins (a reload)
// still opens the tokens of the old one.
var processKeys = sync.OnceValue(func() *keys.Ring {
	r, err := keys.New(nil, nil)
	if err != nil {
		panic(fmt.Sprintf("catalog: key ring: %v", err)) // a random 32-byte secret is always valid
	}
	return r
})
