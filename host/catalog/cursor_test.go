package catalog

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/corral-mcp/corral/host/keys"
)

// FuzzDecodeCursor checks that decoding never panics and that only a
// cursor the Set sealed decodes, spelled as the Set spells it. Cursors are
// random (a fresh nonce each), so the seeds are compared by the position
// they hold.
func FuzzDecodeCursor(f *testing.F) {
	r, err := keys.New([]byte("the fuzz secret, at least 16 bytes"), nil)
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewSet(nil, Options{Keys: r})
	if err != nil {
		f.Fatal(err)
	}
	minted := []position{
		{gen: s.gen, kind: ListResources, provider: 1, offset: 2, dynamic: true, inner: "abc"},
		{gen: s.gen, kind: ListTools},
	}
	for _, p := range minted {
		good := s.encodeCursor(p)
		f.Add(good)
		f.Add(good[:len(good)-1] + "A")
	}
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, c string) {
		p, err := s.decodeCursor(c)
		if err != nil {
			return
		}
		if raw, _ := base64.RawURLEncoding.DecodeString(c); base64.RawURLEncoding.EncodeToString(raw) != c {
			t.Fatalf("decoded %q, another spelling of a cursor", c)
		}
		if !slices.Contains(minted, p) {
			t.Fatalf("decoded %q to %+v, a position the Set never sealed", c, p)
		}
	})
}

func TestCursorRoundTrip(t *testing.T) {
	s, _ := NewSet(nil, Options{})
	for _, p := range []position{
		{gen: s.gen, kind: ListResources},
		{gen: s.gen, kind: ListTools, provider: 300, offset: 70000},
		{gen: s.gen, kind: ListResources, provider: 2, dynamic: true, inner: "provider's cursor ☃"},
	} {
		got, err := s.decodeCursor(s.encodeCursor(p))
		if err != nil || got != p {
			t.Errorf("round trip of %+v: %+v, %v", p, got, err)
		}
	}
}

// BenchmarkCursor is what a middle page of a list pays for its cursors:
// opening the one it was given and minting the next, here with a
// provider's own cursor inside (the sealed case of a dynamic listing).
func BenchmarkCursor(b *testing.B) {
	s, err := NewSet(nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := position{gen: s.gen, kind: ListResources, provider: 3, offset: 120, dynamic: true, inner: "0:some-dir/some-file-name.txt"}
	c := s.encodeCursor(p)
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.decodeCursor(c)
		if err != nil {
			b.Fatal(err)
		}
		c = s.encodeCursor(got)
	}
	b.ReportMetric(float64(len(c)), "bytes/cursor")
}
