package catalog

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/keys"
)

// Format 1 tokens, minted as corral minted them before key rings, still
// open for one release. Delete this file with keys/legacy.go.

var v1Secret = []byte("the catalog.cursorKey of an older corral")

// staticProvider declares resources and is never called.
type staticProvider struct{ m abi.Manifest }

func (p *staticProvider) Manifest() *abi.Manifest { return &p.m }
func (p *staticProvider) Digest() string          { return "" }
func (p *staticProvider) Call(context.Context, Call) (Result, error) {
	return Result{}, &abi.Error{Code: abi.CodeNotFound, Message: "not called"}
}
func (p *staticProvider) RejectOutput(abi.Op, error) {}

var _ Provider = (*staticProvider)(nil)

// mintV1Cursor is the cursor encoder of format 1: version 1, kind, flags,
// uvarint provider, uvarint offset, generation, inner, HMAC-SHA256[:16].
func mintV1Cursor(key []byte, p position) string {
	b := []byte{1, byte(p.kind), 0}
	if p.dynamic {
		b[2] = 1
	}
	b = binary.AppendUvarint(b, uint64(p.provider))
	b = binary.AppendUvarint(b, uint64(p.offset))
	b = binary.BigEndian.AppendUint64(b, p.gen)
	b = append(b, p.inner...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = m.Sum(b)[:len(b)+16]
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestCursorFormat1(t *testing.T) {
	ring, err := keys.New(v1Secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := abi.Manifest{Name: "docs", Version: "1", ABI: abi.Major, Schemes: []string{"docs"}, Resources: []abi.Resource{
		{URI: "docs://a", Name: "a"}, {URI: "docs://b", Name: "b"}, {URI: "docs://c", Name: "c"}}}
	s, err := NewSet([]Provider{&staticProvider{m}}, Options{PageSize: 1, Keys: ring})
	if err != nil {
		t.Fatal(err)
	}
	old := mintV1Cursor(v1Secret, position{gen: s.gen, kind: ListResources, offset: 1})
	page, err := s.List(context.Background(), Request{Principal: abi.Principal{ID: "anonymous"}}, ListResources, old)
	if err != nil {
		t.Fatalf("a format 1 cursor: %v", err)
	}
	if len(page.Items) != 1 || !json.Valid(page.Items[0]) || string(page.Items[0]) != `{"uri":"docs://b","name":"b"}` || page.NextCursor == nil {
		t.Fatalf("page after a format 1 cursor: %s, next %v", page.Items, page.NextCursor)
	}
	// Its next cursor is format 2, and pages on.
	if raw, _ := base64.RawURLEncoding.DecodeString(*page.NextCursor); raw[0] != keys.Version {
		t.Errorf("next cursor of format %d", raw[0])
	}
	if _, err := s.List(context.Background(), Request{Principal: abi.Principal{ID: "anonymous"}}, ListResources, *page.NextCursor); err != nil {
		t.Error(err)
	}
	// Signed with another key, or altered: refused.
	for _, c := range []string{
		mintV1Cursor([]byte("another key, not the configured one"), position{gen: s.gen, kind: ListResources, offset: 1}),
		old[:len(old)-2] + "AA",
	} {
		if _, err := s.decodeCursor(c); err == nil {
			t.Errorf("format 1 cursor %q accepted", c)
		}
	}
}

// mintV1State is the requestState sealer of format 1: AES-256-GCM under
// SHA-256 of the key, nonce first, additional data "corral requestState v1".
func mintV1State(t *testing.T, key []byte, st *sealedState) string {
	t.Helper()
	plain, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(key)
	block, _ := aes.NewCipher(sum[:])
	g, _ := cipher.NewGCM(block)
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(g.Seal(nonce, nonce, plain, []byte("corral requestState v1")))
}

func TestRequestStateFormat1(t *testing.T) {
	ring, err := keys.New([]byte("a new secret, after the older key"), v1Secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	s, err := NewSet(nil, Options{Keys: ring, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	alice := abi.Principal{ID: "alice"}
	digest := requestDigest(alice, abi.OpCallTool, "a_tool", json.RawMessage(`{"x":1}`))
	want := &sealedState{Plugin: "a", Digest: digest, Expiry: now.Unix() + 60, Keys: map[string]string{"confirm": abi.InputElicit}, State: "plugin-state"}
	old := mintV1State(t, v1Secret, want)
	got, err := s.open(old, &provider{name: "a"}, digest)
	if err != nil || got.State != want.State || got.Keys["confirm"] != abi.InputElicit {
		t.Fatalf("a format 1 requestState: %+v, %v", got, err)
	}
	for name, state := range map[string]string{
		"unknown key": mintV1State(t, []byte("nobody's key"), want),
		"altered":     old[:len(old)-2] + "AA",
	} {
		if _, err := s.open(state, &provider{name: "a"}, digest); err == nil {
			t.Errorf("%s: format 1 requestState accepted", name)
		}
	}
}
