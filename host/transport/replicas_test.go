package transport

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/session"
)

// replica is one of several HTTPHandlers sharing a key ring and a session
// store, each with its own server, hub and live sessions: replicas of a
// cluster within one process.
type replica struct {
	h   *HTTPHandler
	hub *notify.Hub
	ts  *httptest.Server
}

// handlerAnswers forwards answers to the replica of the tag, as
// host/cluster does over NATS.
type handlerAnswers struct {
	tag string
	all map[string]*replica
}

func (a handlerAnswers) Tag() string { return a.tag }

func (a handlerAnswers) Forward(_ context.Context, tag, id string, msg []byte) (bool, error) {
	r := a.all[tag]
	if r == nil {
		return false, nil
	}
	return r.h.DeliverAnswer(id, msg), nil
}

var _ Answers = handlerAnswers{}

func replicas(t *testing.T, tags ...string) []*replica {
	t.Helper()
	ring, err := keys.New([]byte("one secret shared by all replicas, 32+ bytes"), nil)
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewMemory(16, 4)
	all := map[string]*replica{}
	var out []*replica
	for _, tag := range tags {
		set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance(), asker()}, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hub := notify.New(notify.Options{})
		srv := mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", Hub: hub, ReplicaTag: tag, InputTimeout: 5 * time.Second})
		h := NewHTTPHandler(srv, HTTPOptions{Keys: ring, Sessions: store, Answers: handlerAnswers{tag, all}, KeepAlive: time.Hour})
		r := &replica{h: h, hub: hub, ts: httptest.NewServer(h)}
		t.Cleanup(func() { h.Close(); r.ts.Close(); hub.Close() })
		all[tag] = r
		out = append(out, r)
	}
	return out
}

// status posts body in session sid to r and returns the status and body.
func (r *replica) post(t *testing.T, sid, body string) (int, string) {
	t.Helper()
	resp := postJSON(t, r.ts, sid, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stream opens sid's GET stream on r.
func (r *replica) stream(t *testing.T, ctx context.Context, sid string) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderSessionID, sid)
	resp, err := r.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body)
}

// TestSessionAcrossReplicas: a session opened on one replica is served by
// the others, each request elsewhere (issue 14 item 5): a subscription
// made on one replica notifies the GET stream another holds, a DELETE on a
// third revokes the session on all of them and ends that stream, and a
// token that is altered, or presented by another principal, names no
// session anywhere.
func TestSessionAcrossReplicas(t *testing.T) {
	rs := replicas(t, "a", "b", "c")
	sid := httpSessionInit(t, rs[0].ts)
	if len(sid) > session.MaxTokenLen {
		t.Errorf("Mcp-Session-Id of %d bytes, over MaxTokenLen %d", len(sid), session.MaxTokenLen)
	}
	for i, r := range rs {
		if st, body := r.post(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); st != http.StatusOK || !strings.Contains(body, `"ask"`) {
			t.Fatalf("replica %d: tools/list %d %s", i, st, body)
		}
	}
	flipped := byte('A')
	if sid[10] == 'A' {
		flipped = 'B'
	}
	altered := sid[:10] + string(flipped) + sid[11:]
	if st, _ := rs[1].post(t, altered, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); st != http.StatusNotFound {
		t.Errorf("an altered session id: %d, want 404", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := rs[0].stream(t, ctx, sid)
	if st, body := rs[1].post(t, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); st != http.StatusOK {
		t.Fatalf("subscribe on b: %d %s", st, body)
	}
	// The subscription reaches a's live session through the store; a's
	// hub then notifies a's stream (in a cluster the event crosses the bus).
	deadline := time.Now().Add(5 * time.Second)
	for !subscribed(rs[0].h, sid) {
		if time.Now().After(deadline) {
			t.Fatal("the subscription made on b never reached a's session")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rs[0].hub.Publish(notify.ResourceUpdated, "test://watched-resource")
	if m := nextEvent(t, events); m.Method != "notifications/resources/updated" {
		t.Fatalf("a's stream got %s, want the update", m.Method)
	}

	st, _ := rs[2].delete(t, sid)
	if st != http.StatusNoContent {
		t.Fatalf("DELETE on c: %d", st)
	}
	for i, r := range rs {
		if st, _ := r.post(t, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != http.StatusNotFound {
			t.Errorf("replica %d after DELETE: %d, want 404", i, st)
		}
	}
	if _, err := io.ReadAll(events); err != nil {
		t.Errorf("a's stream after DELETE: %v", err)
	}
	if st, _ := rs[0].delete(t, sid); st != http.StatusNotFound {
		t.Errorf("second DELETE: %d, want 404", st)
	}
}

// subscribed reports whether h's live half of sid holds the watched resource.
func subscribed(h *HTTPHandler, sid string) bool {
	tok, err := session.OpenToken(h.keys, sid)
	if err != nil {
		return false
	}
	hs := h.live.get(tok.ID)
	return hs != nil && len(hs.s.State().Resources) == 1
}

func (r *replica) delete(t *testing.T, sid string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, r.ts.URL, nil)
	req.Header.Set(HeaderSessionID, sid)
	resp, err := r.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestInputBridgeAcrossReplicas: the client's answer to a bridged
// elicitation/create lands on another replica than the one waiting, and
// is forwarded there (issue 14 item 5); another session's answer to the
// same request is not.
func TestInputBridgeAcrossReplicas(t *testing.T) {
	rs := replicas(t, "a", "b")
	sid := httpSessionInit(t, rs[1].ts)
	call := postJSON(t, rs[0].ts, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	m := nextEvent(t, events)
	if m.Method != "elicitation/create" || !strings.HasPrefix(string(m.ID), `"corral-a-`) {
		t.Fatalf("first event %s %s, want an elicitation/create request tagged a", m.Method, m.ID)
	}
	// Another session's answer to the same id, on the other replica, is
	// dropped: the forged value must not reach the call.
	other := httpSessionInit(t, rs[1].ts)
	if st, _ := rs[1].post(t, other, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"v":"forged"}}}`); st != http.StatusAccepted {
		t.Errorf("a foreign answer on b: %d, want 202", st)
	}
	if st, _ := rs[1].post(t, sid, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"v":"far"}}}`); st != http.StatusAccepted {
		t.Errorf("the answer on b: %d, want 202", st)
	}
	final := nextEvent(t, events)
	if want := `answer {\"action\":\"accept\",\"content\":{\"v\":\"far\"}}`; string(final.ID) != "5" || !strings.Contains(string(final.Result), want) {
		t.Errorf("response %s %s %s, want %s", final.ID, final.Result, final.Error, want)
	}
}

// TestDeleteEndsBridgeAcrossReplicas: a bridged request waiting on one
// replica for the client's answer ends when the session is deleted
// through another, as it does on one process, instead of waiting out its
// input timeout.
func TestDeleteEndsBridgeAcrossReplicas(t *testing.T) {
	rs := replicas(t, "a", "b")
	sid := httpSessionInit(t, rs[0].ts)
	call := postJSON(t, rs[0].ts, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	if m := nextEvent(t, events); m.Method != "elicitation/create" {
		t.Fatalf("first event %s, want elicitation/create", m.Method)
	}
	if st, _ := rs[1].delete(t, sid); st != http.StatusNoContent {
		t.Fatalf("DELETE on b: %d", st)
	}
	final := nextEvent(t, events)
	if string(final.ID) != "5" || !strings.Contains(string(final.Error), "session has ended") {
		t.Errorf("the call after the DELETE on b: %s %s, want the session-ended error, not its input timeout's", final.Result, final.Error)
	}
}
