package catalog

import (
	"context"
	"encoding/json"

	"github.com/corral-mcp/corral/abi"
)

// List returns one page of a merged list. Providers are listed in name
// order; each contributes its manifest-declared items, then (for resources)
// what it lists itself, a page at a time through its own cursor. A page
// costs O(page size): nothing is materialised beyond the page.
//
// cursor is "" for the first page. A cursor that is forged, malformed, from
// another list or from a replaced Set is KindInvalidParams, telling the
// client to restart the listing.
func (s *Set) List(ctx context.Context, r Request, kind ListKind, cursor string) (*Page, error) {
	if kind < ListResources || kind > ListTools {
		return nil, invalidParams("unknown list")
	}
	pos := position{gen: s.gen, kind: kind}
	if cursor != "" {
		var err error
		pos, err = s.decodeCursor(cursor)
		if err != nil || pos.gen != s.gen || pos.kind != kind || int(pos.provider) > len(s.providers) {
			return nil, &Error{Kind: KindInvalidParams,
				Message: "invalid or expired cursor: the server's plugins changed or the cursor was altered; restart the listing without a cursor"}
		}
	}
	page := &Page{Items: make([]json.RawMessage, 0, min(s.opts.PageSize, 64)), TTL: s.listTTL()}
	// A dynamic resource list answers per principal; once a server
	// authenticates, every page of that list is private (cacheScope).
	// With a Policy every list is filtered per principal, so every page of
	// every list is private.
	page.Private = (kind == ListResources && s.opts.Authenticated) || s.opts.Policy != nil
	v := s.view(r.Principal)

	for int(pos.provider) < len(s.providers) {
		pr := s.providers[pos.provider]
		room := s.opts.PageSize - len(page.Items)
		if room == 0 {
			return s.withCursor(page, pos), nil
		}
		if !v.Plugin(pr.name) {
			pos = position{gen: s.gen, kind: kind, provider: pos.provider + 1}
			continue
		}
		if !pos.dynamic {
			static := s.static[kind][pos.provider]
			if int(pos.offset) < len(static) {
				if s.opts.Policy == nil {
					n := min(room, len(static)-int(pos.offset))
					page.Items = append(page.Items, static[pos.offset:int(pos.offset)+n]...)
					pos.offset += uint32(n)
					continue
				}
				keys := s.staticKeys[kind][pos.provider]
				for int(pos.offset) < len(static) && len(page.Items) < s.opts.PageSize {
					if s.staticVisible(v, pr, kind, keys[pos.offset]) {
						page.Items = append(page.Items, static[pos.offset])
					}
					pos.offset++
				}
				continue
			}
			if kind == ListResources && pr.manifest.ListsResources {
				pos.dynamic, pos.inner = true, ""
			} else {
				pos = position{gen: s.gen, kind: kind, provider: pos.provider + 1}
				continue
			}
		}
		items, next, err := s.listDynamic(ctx, pr, r, v, pos.inner, room)
		if err != nil {
			return nil, err
		}
		page.Items = append(page.Items, items...)
		if next == "" {
			pos = position{gen: s.gen, kind: kind, provider: pos.provider + 1}
			continue
		}
		// The provider has more: end the page here so one request makes
		// at most one call per provider that still has items.
		pos.inner = next
		return s.withCursor(page, pos), nil
	}
	return page, nil
}

func (s *Set) withCursor(page *Page, pos position) *Page {
	c := s.encodeCursor(pos)
	page.NextCursor = &c
	return page
}

// listDynamic asks pr for up to limit resources after cursor.
func (s *Set) listDynamic(ctx context.Context, pr *provider, r Request, v View, cursor string, limit int) ([]json.RawMessage, string, error) {
	req, _ := json.Marshal(abi.ListResourcesRequest{Cursor: cursor, Limit: limit, Principal: r.Principal})
	out, _, err := s.call(ctx, pr, r, abi.OpListResources, req, "")
	if err != nil {
		return nil, "", err
	}
	var res listResult
	if err := newDec(out).listResult(&res); err != nil {
		return nil, "", s.badOutput(pr, abi.OpListResources, err)
	}
	next := res.NextCursor.String()
	if len(res.Resources) > limit {
		return nil, "", s.badOutput(pr, abi.OpListResources, outputErr("listed %d resources, the limit was %d", len(res.Resources), limit))
	}
	if len(next) > maxInnerCursor {
		return nil, "", s.badOutput(pr, abi.OpListResources, outputErr("cursor longer than %d bytes", maxInnerCursor))
	}
	if len(res.Resources) == 0 && next != "" {
		return nil, "", s.badOutput(pr, abi.OpListResources, outputErr("an empty page with a next cursor"))
	}
	items := make([]json.RawMessage, 0, len(res.Resources))
	var buf []byte
	for i := range res.Resources {
		uri, err := pr.checkResource(&res.Resources[i])
		if err != nil {
			return nil, "", s.badOutput(pr, abi.OpListResources, err)
		}
		if !uriVisible(v, pr, uri) {
			continue
		}
		if buf == nil {
			buf = make([]byte, 0, len(out))
		}
		start := len(buf)
		buf = res.Resources[i].appendTo(buf)
		items = append(items, buf[start:len(buf):len(buf)])
	}
	return items, next, nil
}

// staticVisible reports whether v may see the static item key of pr's
// list kind.
func (s *Set) staticVisible(v View, pr *provider, kind ListKind, key string) bool {
	switch kind {
	case ListResources:
		return uriVisible(v, pr, key)
	case ListTemplates:
		t, ok := s.templates[key]
		return ok && templateVisible(v, t)
	case ListPrompts:
		return v.Prompt(pr.name, key)
	default:
		return v.Tool(pr.name, key)
	}
}
