package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/session"
	"github.com/corral-mcp/corral/host/transport"
)

// asker serves the tool "ask", which elicits a value and answers with the
// client's ElicitResult.
func asker() *catalogtest.Provider {
	return &catalogtest.Provider{
		M: abi.Manifest{Name: "asker", Version: "1.0.0", ABI: abi.Major,
			Tools: []abi.Tool{{Name: "ask", InputSchema: []byte(`{"type":"object"}`)}}},
		Tool: func(_ context.Context, r abi.CallToolRequest) (any, error) {
			if a := r.InputResponses["q"]; a != nil {
				text, _ := json.Marshal(map[string]string{"type": "text", "text": "answer " + string(a)})
				return &abi.CallToolResult{Content: []json.RawMessage{text}}, nil
			}
			return nil, &abi.InputRequired{InputRequests: map[string]abi.InputRequest{"q": {Method: abi.InputElicit,
				Params: json.RawMessage(`{"message":"v?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}`)}}}
		},
	}
}

// replica is one corral replica's HTTP side: its own NATS connection,
// session store, answer subject, server and hub; the key ring's secret is
// the cluster's.
type replica struct {
	hub *notify.Hub
	ts  *httptest.Server
}

func newReplica(t *testing.T, url, name string) *replica {
	t.Helper()
	nc, js := connect(t, url)
	ring, err := keys.New([]byte("the cluster's one secret, 32 bytes or more"), nil)
	if err != nil {
		t.Fatal(err)
	}
	store := NewSessionStore(js, SessionOptions{Name: "t", MaxSessions: 64, MaxSessionsPerClient: 8})
	t.Cleanup(store.Close)
	answers := NewAnswers(nc, "t", name)
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance(), asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	srv := mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", Hub: hub, ReplicaTag: answers.Tag(), InputTimeout: 10 * time.Second})
	h := transport.NewHTTPHandler(srv, transport.HTTPOptions{Keys: ring, Sessions: store, Answers: answers, KeepAlive: time.Hour})
	if err := answers.Serve(h.DeliverAnswer); err != nil {
		t.Fatal(err)
	}
	r := &replica{hub: hub, ts: httptest.NewServer(h)}
	t.Cleanup(func() { _ = answers.Close(); h.Close(); r.ts.Close(); hub.Close() })
	eventually(t, "session bucket bound", func() bool { _, err := store.kvOf(); return err == nil })
	return r
}

func (r *replica) do(t *testing.T, method, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, r.ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(transport.HeaderSessionID, sid)
	}
	resp, err := r.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (r *replica) status(t *testing.T, method, sid, body string) int {
	t.Helper()
	resp := r.do(t, method, sid, body)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// message is a JSON-RPC message as a client reads it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func nextEvent(t *testing.T, r *bufio.Reader) message {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var m message
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			return m
		}
	}
}

// TestSessionOverNATS: three replicas sharing a NATS server serve one
// 2025-11-25 session with every request on another replica (issue 14
// item 5): the bridged elicitation/create of a tools/call on replica 2 is
// answered through replica 3 and forwarded to 2 over NATS; a
// resources/subscribe through replica 3 reaches the GET stream replica 1
// holds; a DELETE through replica 2 revokes the session on all three and
// ends that stream.
func TestSessionOverNATS(t *testing.T) {
	ns := natsServer(t, t.TempDir(), -1)
	rs := []*replica{newReplica(t, ns.ClientURL(), "r1"), newReplica(t, ns.ClientURL(), "r2"), newReplica(t, ns.ClientURL(), "r3")}
	init := rs[0].do(t, http.MethodPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	init.Body.Close()
	sid := init.Header.Get(transport.HeaderSessionID)
	if sid == "" || len(sid) > session.MaxTokenLen {
		t.Fatalf("initialize: session id %q", sid)
	}
	if st := rs[1].status(t, http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("initialized on r2: %d", st)
	}

	call := rs[1].do(t, http.MethodPost, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	m := nextEvent(t, events)
	if m.Method != "elicitation/create" || !strings.HasPrefix(string(m.ID), `"corral-`+ReplicaTag("r2")+`-`) {
		t.Fatalf("first event %s %s, want r2's elicitation/create", m.Method, m.ID)
	}
	// Another session's answer to the same id, forwarded the same way, is
	// dropped by r2: the forged value must not reach the call.
	oinit := rs[2].do(t, http.MethodPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	oinit.Body.Close()
	if st := rs[2].status(t, http.MethodPost, oinit.Header.Get(transport.HeaderSessionID), `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"v":"forged"}}}`); st != http.StatusAccepted {
		t.Errorf("a foreign answer through r3: %d", st)
	}
	if st := rs[2].status(t, http.MethodPost, sid, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"v":"far"}}}`); st != http.StatusAccepted {
		t.Errorf("the answer through r3: %d", st)
	}
	final := nextEvent(t, events)
	if want := `answer {\"action\":\"accept\",\"content\":{\"v\":\"far\"}}`; string(final.ID) != "5" || !strings.Contains(string(final.Result), want) {
		t.Errorf("tools/call on r2: %s %s %s, want %s", final.ID, final.Result, final.Error, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rs[0].ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(transport.HeaderSessionID, sid)
	get, err := http.DefaultClient.Do(req)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream on r1: %v %v", get, err)
	}
	defer get.Body.Close()
	stream := bufio.NewReader(get.Body)
	if st := rs[2].status(t, http.MethodPost, sid, `{"jsonrpc":"2.0","id":6,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); st != http.StatusOK {
		t.Fatalf("subscribe through r3: %d", st)
	}
	// The event itself crosses the bus in corral serve; here r1's own hub
	// publishes it, once r1 has heard of the subscription.
	got := make(chan message, 1)
	go func() { got <- nextEvent(t, stream) }()
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		rs[0].hub.Publish(notify.ResourceUpdated, "test://watched-resource")
		select {
		case ev := <-got:
			if ev.Method != "notifications/resources/updated" {
				t.Fatalf("r1's stream got %s", ev.Method)
			}
			done = true
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("the subscription made through r3 never reached r1's stream")
		}
	}

	if st := rs[1].status(t, http.MethodDelete, sid, ""); st != http.StatusNoContent {
		t.Fatalf("DELETE through r2: %d", st)
	}
	for i, r := range rs {
		if st := r.status(t, http.MethodPost, sid, `{"jsonrpc":"2.0","id":7,"method":"ping"}`); st != http.StatusNotFound {
			t.Errorf("r%d after DELETE: %d, want 404", i+1, st)
		}
	}
	if _, err := io.ReadAll(stream); err != nil {
		t.Errorf("r1's stream after the DELETE through r2: %v", err)
	}
}

// TestAnswersNoReplica: an answer whose tag names no replica is dropped,
// not an error that hangs the request.
func TestAnswersNoReplica(t *testing.T) {
	ns := natsServer(t, t.TempDir(), -1)
	nc, _ := connect(t, ns.ClientURL())
	a := NewAnswers(nc, "t", "r1")
	if err := a.Serve(func(string, []byte) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Forward(context.Background(), ReplicaTag("gone"), "id", []byte(`{}`)); ok || err != nil {
		t.Errorf("forward to no replica: %v %v, want false, nil", ok, err)
	}
	if ok, err := a.Forward(context.Background(), a.Tag(), "id", []byte(`{}`)); !ok || err != nil {
		t.Errorf("forward to a serving replica: %v %v, want true", ok, err)
	}
}
