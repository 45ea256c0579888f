package catalog

import (
	"container/list"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/corral-mcp/corral/abi"
)

// DefaultPageCacheBytes bounds a PageCache made without a size.
const DefaultPageCacheBytes = 4 << 20

// pageOverhead is what one cached page and each of its items cost beyond
// their bytes, roughly: the entry, its key, the slice headers.
const pageOverhead = 256

// PageCache keeps the last good page each provider listed for each
// principal, so that a list request can serve it while that provider fails,
// hangs past the list budget, is quarantined or sleeps. A page is keyed by the provider's name and digest, the
// principal (its id and groups: a provider lists per principal) and the
// provider's own cursor, so one PageCache can serve every Set the registry
// builds: a reload keeps the pages of the plugins it did not change, and a
// changed plugin's digest keys new pages. Memory is bounded: the least
// recently used pages are evicted past the byte budget. Safe for
// concurrent use; a nil *PageCache keeps nothing.
type PageCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order list.List // of *cachedPage, most recently used first
	pages map[pageKey]*list.Element
	// refreshing are the pages being listed again in the background for
	// a provider that slept (Set.refresh).
	refreshing map[pageKey]bool
}

// NewPageCache returns a PageCache of at most maxBytes
// (DefaultPageCacheBytes when maxBytes <= 0).
func NewPageCache(maxBytes int) *PageCache {
	if maxBytes <= 0 {
		maxBytes = DefaultPageCacheBytes
	}
	return &PageCache{max: maxBytes, pages: map[pageKey]*list.Element{}, refreshing: map[pageKey]bool{}}
}

// startRefresh reports whether a refresh of k may start: none runs.
func (c *PageCache) startRefresh(k pageKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refreshing[k] {
		return false
	}
	c.refreshing[k] = true
	return true
}

// endRefresh records that the refresh of k is over.
func (c *PageCache) endRefresh(k pageKey) {
	c.mu.Lock()
	delete(c.refreshing, k)
	c.mu.Unlock()
}

// pageKey names one provider page as one principal saw it.
type pageKey struct {
	provider  string // name, NUL, digest (a plugin name has no NUL)
	principal string // id, then each group, sorted, each length-prefixed
	cursor    string // the provider's own cursor ("" for its first page)
}

type cachedPage struct {
	key   pageKey
	items []json.RawMessage
	uris  []string // uris[i] is the URI of items[i], to re-check visibility
	next  string
	size  int
}

func newPageKey(pr *provider, p abi.Principal, cursor string) pageKey {
	groups := slices.Clone(p.Groups)
	slices.Sort(groups)
	b := make([]byte, 0, 8+len(p.ID)+16*len(groups))
	for _, part := range append([]string{p.ID}, groups...) {
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(b, ':')
		b = append(b, part...)
	}
	return pageKey{provider: pr.pageName, principal: string(b), cursor: cursor}
}

// get returns the page stored for k.
func (c *PageCache) get(k pageKey) (*cachedPage, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pages[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedPage), true
}

// put stores a page for k, replacing the one before; a page larger than
// the whole budget is not kept. items and uris must not change afterwards.
func (c *PageCache) put(k pageKey, items []json.RawMessage, uris []string, next string) {
	if c == nil {
		return
	}
	size := pageOverhead + len(k.provider) + len(k.principal) + len(k.cursor) + len(next)
	for i := range items {
		size += len(items[i]) + len(uris[i]) + pageOverhead/4
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pages[k]; ok {
		c.remove(e)
	}
	if size > c.max {
		return
	}
	pg := &cachedPage{key: k, items: items, uris: uris, next: next, size: size}
	c.pages[k] = c.order.PushFront(pg)
	c.size += size
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

// remove drops one page; the caller holds c.mu.
func (c *PageCache) remove(e *list.Element) {
	pg := c.order.Remove(e).(*cachedPage)
	delete(c.pages, pg.key)
	c.size -= pg.size
}
