package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// List returns one page of a merged list. Providers are listed in name
// order; each contributes its manifest-declared items, then (for resources)
// what it lists itself, a page at a time through its own cursor. A page
// costs O(page size): nothing is materialised beyond the page.
//
// No provider can fail or stall the list: each is given Options.ListBudget
// for its page, and a page that fails (an error, a trap, the budget,
// quarantine, output the Set refuses) is replaced by the provider's last
// good page for this principal and cursor from Options.Pages, or else left
// out with the rest of that provider's dynamic items; the page records it
// in Skipped. Static items are served without calling the provider, so a
// failing or quarantined provider's static items stay listed.
//
// cursor is "" for the first page. A cursor that is forged, malformed, from
// another list or from a replaced Set is KindInvalidParams, telling the
// client to restart the listing.
func (s *Set) List(ctx context.Context, r Request, kind ListKind, cursor string) (*Page, error) {
	ctx, span := tracer.Start(ctx, "catalog.list")
	defer span.End()
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
		items, next, skip := s.listDynamic(ctx, pr, r, v, pos.inner, room, s.opts.Pages != nil)
		if skip != nil && skip.Reason == SkipAsleep {
			if items, next, skip.Cached = s.fallback(pr, r.Principal, v, pos.inner, room); skip.Cached {
				s.refresh(pr, r.Principal, v, pos.inner, room)
				s.skipped(pr, skip)
				page.Skipped = append(page.Skipped, *skip)
				skip = nil
			} else {
				// No page kept for this principal and cursor: the
				// listing waits for the wake-up, which the provider
				// bounds itself, not by the list budget.
				items, next, skip = s.listDynamic(ctx, pr, r, v, pos.inner, room, false)
			}
		}
		if skip != nil {
			if err := ctx.Err(); err != nil {
				return nil, err // the client gave up: nobody to answer
			}
			items, next, skip.Cached = s.fallback(pr, r.Principal, v, pos.inner, room)
			s.skipped(pr, skip)
			page.Skipped = append(page.Skipped, *skip)
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

// listDynamic asks pr for up to limit resources after cursor, within the
// list budget, and keeps the page for fallback. A page it cannot use is a
// Skip, counted toward quarantine when the failure is the provider's own.
// With mayDefer, a provider asleep answers ErrAsleep at once (SkipAsleep).
func (s *Set) listDynamic(ctx context.Context, pr *provider, r Request, v View, cursor string, limit int, mayDefer bool) ([]json.RawMessage, string, *Skip) {
	const op = abi.OpListResources
	req, _ := json.Marshal(abi.ListResourcesRequest{Cursor: cursor, Limit: limit, Principal: r.Principal})
	res, err := pr.Call(ctx, Call{Op: op, Request: req, Principal: r.Principal, Sink: r.Sink, Timeout: s.opts.ListBudget, MayDefer: mayDefer})
	if err != nil {
		if mayDefer && errors.Is(err, ErrAsleep) {
			return nil, "", &Skip{Plugin: pr.name, Reason: SkipAsleep, Err: err}
		}
		return nil, "", &Skip{Plugin: pr.name, Reason: SkipFailed, Err: err}
	}
	invalid := func(err error) ([]json.RawMessage, string, *Skip) {
		pr.RejectOutput(op, err)
		return nil, "", &Skip{Plugin: pr.name, Reason: SkipInvalid, Err: err}
	}
	switch res.Status {
	case abi.StatusOK:
	case abi.StatusError:
		ae, err := decodeError(res.Body)
		if err != nil {
			return invalid(err)
		}
		if res.Denied != "" {
			return nil, "", &Skip{Plugin: pr.name, Reason: SkipDenied, Err: fmt.Errorf("%w, after capability %s was refused (not granted)", ae, res.Denied)}
		}
		// A list has no failure a client could act on: a declared error
		// is a failed call, as for a trap.
		pr.RejectOutput(op, outputErr("%s declared error %q", op, clientMessage(ae.Code, "")))
		return nil, "", &Skip{Plugin: pr.name, Reason: SkipError, Err: ae}
	default:
		return invalid(outputErr("%s may not answer status %d", op, int32(res.Status)))
	}
	var lr listResult
	if err := newDec(res.Body).listResult(&lr); err != nil {
		return invalid(err)
	}
	next := lr.NextCursor.String()
	if len(lr.Resources) > limit {
		return invalid(outputErr("listed %d resources, the limit was %d", len(lr.Resources), limit))
	}
	if len(next) > maxInnerCursor {
		return invalid(outputErr("cursor longer than %d bytes", maxInnerCursor))
	}
	if len(lr.Resources) == 0 && next != "" {
		return invalid(outputErr("an empty page with a next cursor"))
	}
	var (
		items []json.RawMessage
		uris  []string
		buf   []byte
	)
	for i := range lr.Resources {
		uri, err := pr.checkResource(&lr.Resources[i])
		if err != nil {
			return invalid(err)
		}
		if !uriVisible(v, pr, uri) {
			continue
		}
		if buf == nil { // allocated for a page that has an item to keep
			buf = make([]byte, 0, len(res.Body))
			items = make([]json.RawMessage, 0, len(lr.Resources)-i)
			if s.opts.Pages != nil {
				uris = make([]string, 0, len(lr.Resources)-i)
			}
		}
		start := len(buf)
		buf = lr.Resources[i].appendTo(buf)
		items = append(items, buf[start:len(buf):len(buf)])
		if s.opts.Pages != nil {
			uris = append(uris, uri)
		}
	}
	if s.opts.Pages != nil {
		s.opts.Pages.put(newPageKey(pr, r.Principal, cursor), items, uris, next)
	}
	return items, next, nil
}

// fallback returns pr's last good page for p after cursor, if one is kept
// and fits in room, filtered again through v (the policy may have changed
// since). Without one, the listing moves past pr: its later pages cannot
// be reached without this one.
func (s *Set) fallback(pr *provider, p abi.Principal, v View, cursor string, room int) ([]json.RawMessage, string, bool) {
	if s.opts.Pages == nil {
		return nil, "", false
	}
	pg, ok := s.opts.Pages.get(newPageKey(pr, p, cursor))
	if !ok || len(pg.items) > room {
		return nil, "", false
	}
	items := make([]json.RawMessage, 0, len(pg.items))
	for i, it := range pg.items {
		if uriVisible(v, pr, pg.uris[i]) {
			items = append(items, it)
		}
	}
	return items, pg.next, true
}

// refresh lists pr's page for p after cursor in the background, waking pr
// up, so that the page kept for the next listing is as fresh as this one's
// request. One refresh of a page runs at a time; its outcome is kept (or
// counted as a skip) as a listing's is.
func (s *Set) refresh(pr *provider, p abi.Principal, v View, cursor string, limit int) {
	k := newPageKey(pr, p, cursor)
	if !s.opts.Pages.startRefresh(k) {
		return
	}
	go func() {
		defer s.opts.Pages.endRefresh(k)
		if _, _, sk := s.listDynamic(context.Background(), pr, Request{Principal: p}, v, cursor, limit, false); sk != nil {
			s.skipped(pr, sk)
		}
	}()
}

// skipped reports a skipped page: a metric and a log line naming the
// plugin and why, without the provider's own words or anything listed. A
// page served while its provider sleeps is only counted.
func (s *Set) skipped(pr *provider, sk *Skip) {
	if s.opts.ListSkipped != nil {
		s.opts.ListSkipped(pr.name, sk.Reason, sk.Cached)
	}
	if s.opts.Logger == nil || sk.Reason == SkipAsleep {
		return
	}
	due, unlogged := pr.skips.due(sk.Reason, time.Now())
	if !due {
		return
	}
	args := []any{"plugin", pr.name, "reason", sk.Reason, "served_last_good_page", sk.Cached}
	if unlogged > 0 {
		args = append(args, "unlogged_since_last", unlogged)
	}
	var ae *abi.Error
	switch {
	case errors.As(sk.Err, &ae):
		args = append(args, "code", clientMessage(ae.Code, ""))
	case sk.Reason == SkipFailed:
		args = append(args, "err", sk.Err)
	}
	s.opts.Logger.Warn("catalog: a plugin's list page was left out", args...)
}

// skipLogEvery is how often one provider's skips for one reason are
// logged at most.
const skipLogEvery = time.Minute

// skipLog thins the log lines of one provider's skipped pages: a client
// may list as often as it likes (and a plugin denied a grant, or
// quarantined, is skipped on every list), so each reason is logged at most
// once per skipLogEvery, the line counting the skips left unlogged since
// the last one. Every skip is still counted through Options.ListSkipped.
type skipLog struct {
	mu       sync.Mutex
	last     map[string]time.Time
	unlogged map[string]int
}

// due reports whether a skip for reason at now is to be logged, and how
// many skips for it went unlogged before it.
func (l *skipLog) due(reason string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.last[reason]; ok && now.Sub(t) < skipLogEvery {
		l.unlogged[reason]++
		return false, 0
	}
	if l.last == nil {
		l.last, l.unlogged = map[string]time.Time{}, map[string]int{}
	}
	n := l.unlogged[reason]
	l.last[reason], l.unlogged[reason] = now, 0
	return true, n
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
