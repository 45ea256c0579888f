package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// flaky wraps many's lister: while fail holds, every list call fails the
// way fail says.
func flaky(name string, n int, fail *atomic.Value) *catalogtest.Provider {
	p := many(name, name, n, nil)
	list := p.List
	p.List = func(ctx context.Context, r abi.ListResourcesRequest) (*abi.ListResourcesResult, error) {
		switch fail.Load().(string) {
		case "error":
			return nil, &abi.Error{Code: "internal", Message: "down"}
		case "crash":
			return nil, errors.New("crashed")
		case "hang":
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return list(ctx, r)
	}
	return p
}

func pageURIs(t *testing.T, page *catalog.Page) []string {
	t.Helper()
	var uris []string
	for _, it := range page.Items {
		var r struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(it, &r); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	return uris
}

// TestListFallback: a failing provider's page is replaced by its last good
// page for the same principal and cursor, never by another principal's;
// without one the provider's remaining items are left out and the listing
// goes on with the next provider, through cursors that stay valid.
func TestListFallback(t *testing.T) {
	var fail atomic.Value
	fail.Store("")
	a := flaky("a", 3, &fail) // lists a://r/0..2, two per page
	z := many("z", "z", 1, nil)
	s := mustSet(t, catalog.Options{PageSize: 2, ListBudget: 50 * time.Millisecond, Pages: catalog.NewPageCache(0)}, a, z)
	alice := catalog.Request{Principal: abi.Principal{ID: "alice", Groups: []string{"b", "a"}}}
	bob := catalog.Request{Principal: abi.Principal{ID: "bob"}}
	ctx := context.Background()

	first, err := s.List(ctx, alice, catalog.ListResources, "")
	if err != nil || len(first.Skipped) != 0 {
		t.Fatalf("healthy first page: %v, skipped %v", err, first.Skipped)
	}
	cursor := *first.NextCursor
	for _, mode := range []string{"error", "crash", "hang"} {
		t.Run(mode, func(t *testing.T) {
			fail.Store(mode)
			defer fail.Store("")
			// alice's first page is served from the cache, and its cursor
			// still leads on.
			got, err := s.List(ctx, alice, catalog.ListResources, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"a://r/0", "a://r/1"}, pageURIs(t, got)); diff != "" {
				t.Errorf("alice's cached page (-want +got):\n%s", diff)
			}
			if len(got.Skipped) != 1 || got.Skipped[0].Plugin != "a" || !got.Skipped[0].Cached {
				t.Errorf("skipped %+v, want a, served from the cache", got.Skipped)
			}
			if got.NextCursor == nil {
				t.Fatal("no cursor after the cached page")
			}
			// Her second page was never listed: a is left out, z follows,
			// from the cursor of the cached page as from the healthy one.
			for _, c := range []string{*got.NextCursor, cursor} {
				got, err := s.List(ctx, alice, catalog.ListResources, c)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"z://r/0"}, pageURIs(t, got)); diff != "" || got.NextCursor != nil {
					t.Errorf("alice's second page (-want +got):\n%s (cursor %v)", diff, got.NextCursor)
				}
			}
			// bob is another principal: alice's page is never his.
			got, err = s.List(ctx, bob, catalog.ListResources, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"z://r/0"}, pageURIs(t, got)); diff != "" {
				t.Errorf("bob's page (-want +got):\n%s", diff)
			}
			if len(got.Skipped) != 1 || got.Skipped[0].Cached {
				t.Errorf("bob: skipped %+v, want a, not from the cache", got.Skipped)
			}
		})
	}
}

// TestListSkipAccounting: a declared error and a refused page count toward
// quarantine (RejectOutput), a provider's own failure is left to the
// provider; each skip is reported once with its reason.
func TestListSkipAccounting(t *testing.T) {
	tests := []struct {
		name     string
		list     func() (*abi.ListResourcesResult, error)
		reason   string
		rejected int64
	}{
		{"declared error", func() (*abi.ListResourcesResult, error) {
			return nil, &abi.Error{Code: "internal", Message: "down"}
		}, catalog.SkipError, 1},
		{"outside its claims", func() (*abi.ListResourcesResult, error) {
			return &abi.ListResourcesResult{Resources: []json.RawMessage{json.RawMessage(`{"uri":"other://x","name":"x"}`)}}, nil
		}, catalog.SkipInvalid, 1},
		{"more than asked", func() (*abi.ListResourcesResult, error) {
			var rs []json.RawMessage
			for i := range 3 {
				rs = append(rs, json.RawMessage(fmt.Sprintf(`{"uri":"p://%d","name":"x"}`, i)))
			}
			return &abi.ListResourcesResult{Resources: rs}, nil
		}, catalog.SkipInvalid, 1},
		{"input required", func() (*abi.ListResourcesResult, error) {
			return nil, &abi.InputRequired{State: "s"}
		}, catalog.SkipInvalid, 1},
		{"own failure", func() (*abi.ListResourcesResult, error) {
			return nil, errors.New("crashed")
		}, catalog.SkipFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &catalogtest.Provider{
				M: abi.Manifest{Name: "p", Version: "1", ABI: abi.Major, Schemes: []string{"p"}, ListsResources: true,
					Resources: []abi.Resource{{URI: "p://static", Name: "static"}}},
				List: func(context.Context, abi.ListResourcesRequest) (*abi.ListResourcesResult, error) { return tt.list() },
			}
			var reported []string
			s := mustSet(t, catalog.Options{PageSize: 2, ListSkipped: func(plugin, reason string, cached bool) {
				reported = append(reported, fmt.Sprintf("%s %s %v", plugin, reason, cached))
			}}, p)
			page, err := s.List(context.Background(), anon, catalog.ListResources, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"p://static"}, pageURIs(t, page)); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"p " + tt.reason + " false"}, reported); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
			if p.Rejected() != tt.rejected {
				t.Errorf("rejected %d outputs, want %d", p.Rejected(), tt.rejected)
			}
		})
	}
}

// TestListCancelled: a list whose client has gone fails instead of
// serving anything.
func TestListCancelled(t *testing.T) {
	var fail atomic.Value
	fail.Store("hang")
	s := mustSet(t, catalog.Options{}, flaky("a", 1, &fail))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.List(ctx, anon, catalog.ListResources, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestListSkipLogThinned: a provider skipped on every list (its grant
// missing, or quarantined) does not make every client's list a log line:
// each reason is logged once a minute at most, while every skip is still
// counted. Before, 20 lists wrote 20 lines.
func TestListSkipLogThinned(t *testing.T) {
	p := &catalogtest.Provider{
		M: abi.Manifest{Name: "p", Version: "1", ABI: abi.Major, Schemes: []string{"p"}, ListsResources: true},
		List: func(context.Context, abi.ListResourcesRequest) (*abi.ListResourcesResult, error) {
			return nil, errors.New("crashed")
		},
	}
	var logs bytes.Buffer
	skips := 0
	s := mustSet(t, catalog.Options{
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
		ListSkipped: func(string, string, bool) { skips++ },
	}, p)
	const lists = 20
	for range lists {
		if _, err := s.List(context.Background(), anon, catalog.ListResources, ""); err != nil {
			t.Fatal(err)
		}
	}
	if skips != lists {
		t.Errorf("%d skips counted, want %d", skips, lists)
	}
	if n := strings.Count(logs.String(), "list page was left out"); n != 1 {
		t.Errorf("%d log lines for %d skips, want 1:\n%s", n, lists, logs.String())
	}
}
