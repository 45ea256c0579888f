package session

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/keys"
)

func ring(t testing.TB, secret string) *keys.Ring {
	t.Helper()
	r, err := keys.New([]byte(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const secret = "the cluster's one secret, 32 bytes or more"

// TestToken: a token opens on any ring holding the secret, names its
// owner only as a digest, and is refused altered, under another secret or
// for another purpose. Its length is what docs/cluster.md states.
func TestToken(t *testing.T) {
	a, b := ring(t, secret), ring(t, secret)
	tok, err := NewToken("alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	tok.Version = "2025-11-25"
	s := tok.Seal(a)
	if len(s) != 102 || len(s) > MaxTokenLen {
		t.Errorf("token of %d characters, want 102 (MaxTokenLen %d)", len(s), MaxTokenLen)
	}
	got, err := OpenToken(b, s)
	if err != nil || got != tok {
		t.Fatalf("another replica opened %+v, %v; want %+v", got, err, tok)
	}
	if !got.OwnedBy("alice@example.com") || got.OwnedBy("bob") || got.OwnedBy("") {
		t.Error("OwnedBy does not tell the owner apart")
	}
	if strings.Contains(s, "alice") || strings.Contains(s, tok.ID) {
		t.Error("the token shows its owner or id")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(s)
	raw[len(raw)-3] ^= 1
	cursor := a.Seal(keys.Cursor, []byte("0123456789abcdef0123456789abcdef\x0a2025-11-25"))
	for name, bad := range map[string]string{
		"altered":        base64.RawURLEncoding.EncodeToString(raw),
		"another secret": tok.Seal(ring(t, "another deployment's secret, 32+ bytes")),
		"a cursor":       cursor,
		"too long":       s + strings.Repeat("A", MaxTokenLen),
		"empty":          "",
		"short plain":    a.Seal(keys.Session, []byte("short")),
	} {
		if _, err := OpenToken(b, bad); !errors.Is(err, ErrToken) {
			t.Errorf("%s: %v, want ErrToken", name, err)
		}
	}
}

// TestMemoryQuotas: the per-client bound ends the client's own least
// recently used session; the global bound refuses.
func TestMemoryQuotas(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(4, 2)
	for _, id := range []string{"a1", "a2"} {
		if ended, err := m.Create(ctx, id, Record{Client: "a"}); err != nil || ended != nil {
			t.Fatalf("create %s: %v %v", id, ended, err)
		}
	}
	if _, err := m.Get(ctx, "a1"); err != nil { // a2 is now the least recently used
		t.Fatal(err)
	}
	if ended, err := m.Create(ctx, "a3", Record{Client: "a"}); err != nil || !slices.Equal(ended, []string{"a2"}) {
		t.Errorf("a over its quota ended %v, %v; want a2", ended, err)
	}
	if _, err := m.Get(ctx, "a2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("evicted a2: %v", err)
	}
	for _, id := range []string{"b1", "b2"} {
		if _, err := m.Create(ctx, id, Record{Client: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Create(ctx, "c1", Record{Client: "c"}); !errors.Is(err, ErrFull) {
		t.Errorf("full store: %v, want ErrFull", err)
	}
	if st := m.Stats(); st != (Stats{Open: 4, Evicted: 1, Refused: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// TestMemoryUpdateWatchDelete: an update bumps the revision, keeps the
// client, reaches a watcher; a delete ends the watch and the session.
func TestMemoryUpdateWatchDelete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := NewMemory(4, 4)
	if _, err := m.Create(ctx, "s", Record{Client: "a", LogLevel: "info"}); err != nil {
		t.Fatal(err)
	}
	w, err := m.Watch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := m.Update(ctx, "s", func(r *Record) {
		r.Client = "b" // ignored: the quota's key stays
		r.Resources = append(r.Resources, "test://x")
	})
	if err != nil || rec.Rev != 2 || rec.Client != "a" || !slices.Equal(rec.Resources, []string{"test://x"}) {
		t.Fatalf("Update = %+v, %v", rec, err)
	}
	if got := <-w; !got.Equal(rec) || got.Rev != 2 {
		t.Errorf("watch got %+v, want %+v", got, rec)
	}
	if err := m.Delete(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w; ok {
		t.Error("the watch outlived the session")
	}
	if _, err := m.Update(ctx, "s", func(*Record) {}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update after Delete: %v", err)
	}
	if err := m.Delete(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := m.Watch(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Watch after Delete: %v", err)
	}
}

func BenchmarkToken(b *testing.B) {
	r := ring(b, secret)
	tok, _ := NewToken("alice")
	tok.Version = "2025-11-25"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenToken(r, tok.Seal(r)); err != nil {
			b.Fatal(err)
		}
	}
}
