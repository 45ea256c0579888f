package catalog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/keys"
)

func ring(t testing.TB, current, previous []byte) *keys.Ring {
	t.Helper()
	r, err := keys.New(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	oldSecret = []byte("the secret before the rotation, 32+ bytes")
	newSecret = []byte("the secret after the rotation, 32+ bytes!")
)

// hideFrom is a Policy hiding every URI containing "zzpriv" from one
// principal.
type hideFrom string

func (h hideFrom) View(p abi.Principal) catalog.View {
	if p.ID == string(h) {
		return hidden{}
	}
	return nil
}

type hidden struct{}

func (hidden) Plugin(string) bool                   { return true }
func (hidden) Resource(_, _, _, uri string) bool    { return !strings.Contains(uri, "zzpriv") }
func (hidden) Template(string, string, string) bool { return true }
func (hidden) Prompt(string, string) bool           { return true }
func (hidden) Tool(string, string) bool             { return true }

// folder lists files a page at a time with the files plugin's cursor: the
// path of the last file listed.
func folder() *catalogtest.Provider {
	paths := []string{"a.txt", "b.txt", "zzpriv-dir/zzpriv-plan-1.txt", "zzpriv-dir/zzpriv-plan-2.txt", "zz-public.txt"}
	return &catalogtest.Provider{
		M: abi.Manifest{Name: "files", Version: "1", ABI: abi.Major, Schemes: []string{"file"}, ListsResources: true},
		List: func(_ context.Context, r abi.ListResourcesRequest) (*abi.ListResourcesResult, error) {
			start := 0
			if after, ok := strings.CutPrefix(r.Cursor, "0:"); ok {
				start = slices.Index(paths, after) + 1
			}
			end := min(start+r.Limit, len(paths))
			res := &abi.ListResourcesResult{Resources: []json.RawMessage{}}
			for _, p := range paths[start:end] {
				res.Resources = append(res.Resources, json.RawMessage(fmt.Sprintf(`{"uri":"file:///%s","name":%q}`, p, p)))
			}
			if end < len(paths) {
				res.NextCursor = "0:" + paths[end-1]
			}
			return res, nil
		},
	}
}

// TestCursorHidesNames: B pages through a folder where the policy hides
// A's files; the provider's own cursor names the last file it listed,
// hidden ones included. B decodes every cursor it is given and finds none
// of the hidden names (signed-only cursors carried them in clear).
func TestCursorHidesNames(t *testing.T) {
	s := mustSet(t, catalog.Options{PageSize: 2, Policy: hideFrom("b")}, folder())
	b := catalog.Request{Principal: abi.Principal{ID: "b"}}
	var uris []string
	cursor, pages := "", 0
	for ; pages < 10; pages++ {
		page, err := s.List(context.Background(), b, catalog.ListResources, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var r struct{ URI string }
			json.Unmarshal(it, &r)
			uris = append(uris, r.URI)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			t.Fatalf("cursor %q is not base64url: %v", cursor, err)
		}
		for _, leak := range []string{"zzpriv", "plan-2", "b.txt"} {
			if bytes.Contains(raw, []byte(leak)) || strings.Contains(cursor, leak) {
				t.Errorf("page %d: B's cursor %q shows %q", pages, raw, leak)
			}
		}
	}
	if want := []string{"file:///a.txt", "file:///b.txt", "file:///zz-public.txt"}; !slices.Equal(uris, want) {
		t.Errorf("B listed %v, want %v", uris, want)
	}
}

// TestCursorSurvivesRotation: a cursor minted under the previous secret
// pages on after the rotation, on the same Set (a SIGHUP reload updates
// the ring in place) and on a replica configured with the new ring; once
// the previous secret is dropped it is refused with the restart message.
func TestCursorSurvivesRotation(t *testing.T) {
	r := ring(t, oldSecret, nil)
	s := mustSet(t, catalog.Options{PageSize: 1, Keys: r}, catalogtest.Conformance())
	first, err := s.List(context.Background(), anon, catalog.ListResources, "")
	if err != nil || first.NextCursor == nil {
		t.Fatal(err)
	}
	old := *first.NextCursor
	if err := r.Update(newSecret, oldSecret); err != nil {
		t.Fatal(err)
	}
	replica := mustSet(t, catalog.Options{PageSize: 1, Keys: ring(t, newSecret, oldSecret)}, catalogtest.Conformance())
	for name, set := range map[string]*catalog.Set{"same set": s, "replica": replica} {
		page, err := set.List(context.Background(), anon, catalog.ListResources, old)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("%s: page after rotation: %v, %v", name, page, err)
		}
		if page.NextCursor != nil {
			if _, err := ring(t, newSecret, nil).Open(keys.Cursor, *page.NextCursor); err != nil {
				t.Errorf("%s: the next cursor is not sealed under the new secret: %v", name, err)
			}
		}
	}
	if err := r.Update(newSecret, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.List(context.Background(), anon, catalog.ListResources, old)
	if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInvalidParams || !strings.Contains(ce.Message, "restart the listing") {
		t.Errorf("a cursor of a dropped secret: %v, want the restart message", err)
	}
}

// TestRequestStateSurvivesRotation: the same for input_required state, and
// a state of an unknown key is refused.
func TestRequestStateSurvivesRotation(t *testing.T) {
	r := ring(t, oldSecret, nil)
	s := mustSet(t, catalog.Options{Keys: r}, confirmer("a", new(abi.Input)))
	alice := abi.Principal{ID: "alice"}
	yes := json.RawMessage(`{"confirm":{"action":"accept","content":{"ok":true}}}`)
	retry := func(state string) error {
		_, err := call(s, alice, "a_tool", `{}`, &catalog.Input{Capabilities: elicitCaps, Responses: yes, State: &state})
		return err
	}
	state := firstRound(t, s, alice, "a_tool", `{}`)
	if err := r.Update(newSecret, oldSecret); err != nil {
		t.Fatal(err)
	}
	if err := retry(state); err != nil {
		t.Fatalf("a state of the previous secret after rotation: %v", err)
	}
	other := mustSet(t, catalog.Options{Keys: ring(t, []byte("another deployment's secret, 32+ b"), nil)}, confirmer("a", new(abi.Input)))
	foreign := firstRound(t, other, alice, "a_tool", `{}`)
	if err := r.Update(newSecret, nil); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]string{"dropped secret": state, "unknown key": foreign} {
		if ce := catalog.AsError(retry(st)); ce == nil || ce.Kind != catalog.KindInvalidParams {
			t.Errorf("%s: %v, want invalid params", name, ce)
		}
	}
}
