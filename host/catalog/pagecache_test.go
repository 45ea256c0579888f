package catalog

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestPageCacheBounded: the cache never holds more than its budget, drops
// the least recently used page first, refuses a page larger than the
// whole budget, and keys pages by provider digest, principal (groups in
// any order) and cursor.
func TestPageCacheBounded(t *testing.T) {
	c := NewPageCache(8 << 10)
	pr := &provider{Provider: &rawProvider{}, name: "p", pageName: "p\x00"}
	item := json.RawMessage(`{"uri":"p://x","name":"x"}`)
	key := func(i int) pageKey { return newPageKey(pr, abi.Principal{ID: fmt.Sprint(i)}, "") }
	for i := range 1000 {
		c.put(key(i), []json.RawMessage{item}, []string{"p://x"}, "")
		if i == 10 {
			c.get(key(0)) // used: kept while later ones go
		}
		if c.size > c.max {
			t.Fatalf("after %d pages: %d bytes, over the budget of %d", i+1, c.size, c.max)
		}
	}
	if _, ok := c.get(key(1)); ok {
		t.Error("the least recently used page is still kept")
	}
	if _, ok := c.get(key(999)); !ok {
		t.Error("the newest page was evicted")
	}
	huge := make([]json.RawMessage, 100)
	uris := make([]string, 100)
	for i := range huge {
		huge[i] = make(json.RawMessage, 100)
	}
	c.put(key(-1), huge, uris, "")
	if _, ok := c.get(key(-1)); ok {
		t.Error("a page over the whole budget was kept")
	}

	a := newPageKey(pr, abi.Principal{ID: "u", Groups: []string{"x", "y"}}, "c")
	if b := newPageKey(pr, abi.Principal{ID: "u", Groups: []string{"y", "x"}}, "c"); a != b {
		t.Error("group order changes the key")
	}
	for _, other := range []pageKey{
		newPageKey(pr, abi.Principal{ID: "u", Groups: []string{"x"}}, "c"),
		newPageKey(pr, abi.Principal{ID: "u\x00x", Groups: []string{"y"}}, "c"),
		newPageKey(pr, abi.Principal{ID: "u", Groups: []string{"x", "y"}}, ""),
		newPageKey(&provider{Provider: &rawProvider{}, name: "q", pageName: "q\x00"}, abi.Principal{ID: "u", Groups: []string{"x", "y"}}, "c"),
	} {
		if other == a {
			t.Errorf("%q collides with %q", other, a)
		}
	}
	var nilCache *PageCache
	nilCache.put(a, nil, nil, "")
	if _, ok := nilCache.get(a); ok {
		t.Error("a nil cache kept a page")
	}
}

// TestPageCacheHammer: many lists at once put and get pages of a small
// cache (run with -race); it stays within its budget and consistent.
func TestPageCacheHammer(t *testing.T) {
	c := NewPageCache(4 << 10)
	pr := &provider{Provider: &rawProvider{}, name: "p", pageName: "p\x00"}
	item := json.RawMessage(`{"uri":"p://x","name":"x"}`)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := newPageKey(pr, abi.Principal{ID: fmt.Sprint((w*7 + i) % 50)}, "")
				if i%3 == 0 {
					c.put(k, []json.RawMessage{item}, []string{"p://x"}, "")
				} else if pg, ok := c.get(k); ok && (len(pg.items) != 1 || pg.uris[0] != "p://x") {
					t.Errorf("page %v is torn", pg)
					return
				}
			}
		}()
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size > c.max || c.order.Len() != len(c.pages) {
		t.Errorf("size %d of %d, %d pages in order and %d in the map", c.size, c.max, c.order.Len(), len(c.pages))
	}
}
