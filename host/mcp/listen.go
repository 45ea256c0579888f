package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/notify"
)

// listenFilter is the SubscriptionFilter of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// subIDKey is the _meta key tagging every notification of a listen stream.
const subIDKey = "io.modelcontextprotocol/subscriptionId"

// listen serves 2026-07-28 subscriptions/listen: it subscribes to the hub,
// sends the acknowledgement naming what is honoured, then streams the
// subscription's notifications through req.Notify, each tagged with the
// request id, until the client goes away (ctx: no response) or the server
// shuts down (the graceful-closure result).
func (s *Server) listen(ctx context.Context, req Request, m *Message) ([]byte, *Error) {
	if s.opts.Hub == nil {
		return nil, methodNotFound(m.Method, "")
	}
	if m.pErr != nil || m.p.Notifications == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: notifications (a SubscriptionFilter object) is required."}
	}
	if req.Notify == nil {
		return nil, &Error{Code: CodeInternalError, Message: "Internal error: this transport cannot stream notifications."}
	}
	want := m.p.Notifications
	p := req.Principal
	if p.ID == "" {
		p = catalog.Anonymous()
	}
	honoured := listenFilter{
		ToolsListChanged:     want.ToolsListChanged,
		PromptsListChanged:   want.PromptsListChanged,
		ResourcesListChanged: want.ResourcesListChanged,
	}
	seen := map[string]bool{}
	for _, u := range want.ResourceSubscriptions {
		if seen[u] || len(honoured.ResourceSubscriptions) >= s.maxURIs() {
			continue
		}
		if _, err := catalog.ValidateURI(u); err != nil {
			continue // not a URI we could ever notify about
		}
		seen[u] = true
		honoured.ResourceSubscriptions = append(honoured.ResourceSubscriptions, u)
	}
	sub := s.opts.Hub.Subscribe(p, notify.Filter{
		ResourcesListChanged: honoured.ResourcesListChanged,
		PromptsListChanged:   honoured.PromptsListChanged,
		ToolsListChanged:     honoured.ToolsListChanged,
		Resources:            s.visibleURIs(p, honoured.ResourceSubscriptions),
	})
	defer sub.Close()

	ack := make([]byte, 0, 160+len(m.ID))
	ack = append(ack, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"`+subIDKey+`":`...)
	ack = append(ack, m.ID...)
	ack = append(ack, `},"notifications":`...)
	f, _ := json.Marshal(honoured) // plain struct: always encodes
	ack = append(ack, f...)
	ack = append(ack, "}}"...)
	if err := req.Notify(ack); err != nil {
		s.log.Debug("mcp: listen stream closed before its acknowledgement", "err", err)
		return nil, nil
	}
	if err := Pump(ctx, sub, m.ID, req.Notify); err != nil {
		s.log.Debug("mcp: listen stream ended", "id", string(m.ID), "err", err)
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	// The hub closed: end gracefully.
	return s.result(m.ID, eraModern, 96+len(m.ID), func(b []byte) []byte {
		b = append(b, `{"resultType":"complete","_meta":{"`+subIDKey+`":`...)
		b = append(b, m.ID...)
		b = append(b, `,"io.modelcontextprotocol/serverInfo":`...)
		b = append(b, s.serverInfo...)
		return append(b, "}}"...)
	}), nil
}

func (s *Server) maxURIs() int { return notify.DefaultMaxURIs }

// Pump writes sub's notifications with send until ctx is done (it returns
// ctx's error), sub is done (nil), or send fails (its error). Each
// notification is tagged with subscriptionID when it is not nil (a
// 2026-07-28 listen stream); legacy session streams pass nil.
func Pump(ctx context.Context, sub *notify.Subscription, subscriptionID json.RawMessage, send func([]byte) error) error {
	return pump(ctx, sub, subscriptionID, send, nil, 0, nil)
}

// PumpSession writes a legacy session's notifications on a stream of
// their own (the Streamable HTTP GET stream) until ctx is done, the
// session or its subscription ends (nil; a re-initialize replaces the
// subscription), or send or ping fails. Without a subscription (no hub)
// the stream only keeps alive. When keepalive is positive, ping is called
// every keepalive.
func PumpSession(ctx context.Context, sess *Session, send func([]byte) error, keepalive time.Duration, ping func() error) error {
	return pump(ctx, sess.Subscription(), nil, send, sess.Done(), keepalive, ping)
}

func pump(ctx context.Context, sub *notify.Subscription, subscriptionID json.RawMessage, send func([]byte) error,
	end <-chan struct{}, keepalive time.Duration, ping func() error) error {
	var ready, done <-chan struct{}
	if sub != nil {
		ready, done = sub.Ready(), sub.Done()
	}
	var tick <-chan time.Time
	if keepalive > 0 {
		t := time.NewTicker(keepalive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return nil
		case <-end:
			return nil
		case <-ready:
			for _, ev := range sub.Take() {
				if err := send(EncodeEvent(ev, subscriptionID)); err != nil {
					return fmt.Errorf("mcp: send notification: %w", err)
				}
			}
		case <-tick:
			if err := ping(); err != nil {
				return fmt.Errorf("mcp: keep stream alive: %w", err)
			}
		}
	}
}

// EncodeEvent encodes a hub notification as a JSON-RPC notification,
// tagged with subscriptionID when it is not nil.
func EncodeEvent(ev notify.Event, subscriptionID json.RawMessage) []byte {
	b := make([]byte, 0, 128+len(ev.URI)+len(subscriptionID))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, ev.Kind.Method())
	if subscriptionID == nil && ev.Kind != notify.ResourceUpdated {
		return append(b, '}')
	}
	b = append(b, `,"params":{`...)
	if subscriptionID != nil {
		b = append(b, `"_meta":{"`+subIDKey+`":`...)
		b = append(b, subscriptionID...)
		b = append(b, '}')
	}
	if ev.Kind == notify.ResourceUpdated {
		if subscriptionID != nil {
			b = append(b, ',')
		}
		b = append(b, `"uri":`...)
		b = appendString(b, ev.URI)
	}
	return append(b, "}}"...)
}

// subscribe serves legacy resources/subscribe and resources/unsubscribe:
// the session's subscription gains or loses the URI.
func (s *Server) subscribe(req Request, m *Message) ([]byte, *Error) {
	sub := req.Session.Subscription()
	if s.opts.Hub == nil || sub == nil {
		return nil, methodNotFound(m.Method, "")
	}
	if m.pErr != nil || m.p.URI == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: uri is required."}
	}
	if _, err := catalog.ValidateURI(m.p.URI); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: uri is not a valid URI."}
	}
	if m.Method == "resources/subscribe" {
		if !s.canSee(req.Principal, m.p.URI) {
			// Acknowledged like any other, so hidden looks like missing,
			// but never notified.
			return s.result(m.ID, eraLegacy, 2, func(b []byte) []byte { return append(b, "{}"...) }), nil
		}
		if !sub.Add(m.p.URI) {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid params: a session may subscribe to at most %d resources.", s.maxURIs())}
		}
	} else {
		sub.Remove(m.p.URI)
	}
	return s.result(m.ID, eraLegacy, 2, func(b []byte) []byte { return append(b, "{}"...) }), nil
}
