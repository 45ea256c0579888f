package registry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// listURIs walks every page of resources/list and returns the URIs in
// order, failing on any error.
func listURIs(t *testing.T, set *catalog.Set) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for range 100 {
		page, err := set.List(context.Background(), catalog.Request{Principal: catalog.Anonymous()}, catalog.ListResources, cursor)
		if err != nil {
			t.Fatalf("resources/list (cursor %q): %v", cursor, err)
		}
		for _, it := range page.Items {
			var r struct {
				URI string `json:"uri"`
			}
			if err := json.Unmarshal(it, &r); err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		if page.NextCursor == nil {
			return uris
		}
		cursor = *page.NextCursor
	}
	t.Fatal("resources/list did not end within 100 pages")
	return nil
}

// TestListSurvivesFailingLister serves good.wasm next to a plugin whose
// dynamic list fails in each way a hostile plugin can fail it, through the
// real registry and wazero, with pages of two items so that every lister
// is asked with room for at most two. Every list still answers, with every
// static item of both plugins (a failing plugin's static items stay, even
// quarantined) and nothing of the failing page; a hanging lister costs a
// list at most the list budget. The failures are the plugin's own, so they
// quarantine it; a plugin refused a capability the operator did not grant
// (listdenied, like files without a root) is skipped but not quarantined.
func TestListSurvivesFailingLister(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Wasm plugins")
	}
	const budget = 200 * time.Millisecond
	tests := []struct {
		fixture    string
		quarantine bool
	}{
		{"listerror", true},
		{"listtrap", true},
		{"listoutside", true},
		{"listmany", true},
		{"listhang", true},
		{"listdenied", false},
	}
	threshold := config.DefaultPlugin().Limits.QuarantineAfter
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ctx := context.Background()
			rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close(ctx) })
			dir := t.TempDir()
			copyFixture(t, dir, "good")
			copyFixture(t, dir, tt.fixture)
			r := startWith(t, Options{
				Dir: dir, Loader: WasmLoader(rt), Debounce: 30 * time.Millisecond,
				SetOptions: catalog.Options{PageSize: 2, ListBudget: budget, Pages: catalog.NewPageCache(0)},
			}, nil)
			set := r.Catalog().Current()
			want := []string{"good://hello", tt.fixture + "://static"}
			for i := range threshold + 1 {
				start := time.Now()
				got := listURIs(t, set)
				if !slices.Equal(got, want) {
					t.Fatalf("list %d: %v, want %v", i, got, want)
				}
				// A generous bound for a loaded machine: the hanging
				// lister alone would take limits.timeout (5s).
				if d := time.Since(start); d > budget+2*time.Second {
					t.Errorf("list %d took %v, want about the budget %v at most", i, d, budget)
				}
			}
			_, err = set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, tt.fixture+"://static")
			if got := errors.Is(err, plugin.ErrQuarantined); got != tt.quarantine {
				t.Errorf("after %d failed lists: read err %v; quarantined %v, want %v", threshold+1, err, got, tt.quarantine)
			}
			if res, err := set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, "good://hello"); err != nil ||
				!strings.Contains(string(res.Contents[0]), "hello from wat") {
				t.Errorf("good.wasm: %v", err)
			}
		})
	}
}
