package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/notify"
)

func newHubServer(t *testing.T) (*Server, *notify.Hub) {
	t.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	return NewServer(catalog.New(set), Options{Version: "test", Hub: hub}), hub
}

// stream collects what a request sends through Notify.
type stream chan string

func (s stream) notify(b []byte) error { s <- string(b); return nil }

func (s stream) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-s:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
		return ""
	}
}

func TestListen(t *testing.T) {
	srv, hub := newHubServer(t)
	out := make(stream, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Reply, 1)
	go func() {
		done <- srv.ServeBytes(ctx, Request{Notify: out.notify}, []byte(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{`+modernMeta+
			`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://static-text","not a uri","test://static-text"]}}}`))
	}()
	want := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://static-text"]}}}`
	if got := out.next(t); got != want {
		t.Fatalf("ack:\n got %s\nwant %s", got, want)
	}
	hub.Publish(notify.PromptsListChanged, "") // not asked for
	hub.Publish(notify.ResourceUpdated, "test://other")
	hub.Publish(notify.ResourceUpdated, "test://static-text")
	hub.Publish(notify.ToolsListChanged, "")
	got := []string{out.next(t), out.next(t)}
	wantEv := []string{
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"uri":"test://static-text"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`,
	}
	if diff := cmp.Diff(wantEv, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	cancel()
	if r := <-done; r.Msg != nil {
		t.Errorf("cancelled listen answered %s", r.Msg)
	}
	if n := hub.Len(); n != 0 {
		t.Errorf("%d subscriptions left after the stream ended", n)
	}
}

func TestListenGracefulClose(t *testing.T) {
	srv, hub := newHubServer(t)
	out := make(stream, 4)
	done := make(chan Reply, 1)
	go func() {
		done <- srv.ServeBytes(context.Background(), Request{Notify: out.notify}, []byte(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{}}}`))
	}()
	if ack := out.next(t); !strings.Contains(ack, `"notifications":{}`) {
		t.Errorf("ack %s", ack)
	}
	hub.Close()
	r := <-done
	want := `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7,"io.modelcontextprotocol/serverInfo":{"name":"corral","version":"test"}}}}`
	if string(r.Msg) != want {
		t.Errorf("result:\n got %s\nwant %s", r.Msg, want)
	}
}

func TestListenErrors(t *testing.T) {
	srv, _ := newHubServer(t)
	plain := newServer(t)
	tests := []struct {
		name string
		srv  *Server
		msg  string
		code int
	}{
		{"no filter", srv, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + modernMeta + `}}`, CodeInvalidParams},
		{"no hub", plain, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + modernMeta + `,"notifications":{}}}`, CodeMethodNotFound},
		{"legacy era", srv, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}`, CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.srv.ServeBytes(context.Background(), Request{Notify: func([]byte) error { return nil }}, []byte(tt.msg))
			if r.Err == nil || r.Err.Code != tt.code {
				t.Errorf("got %s, want code %d", r.Msg, tt.code)
			}
		})
	}
}

func TestLegacySubscribe(t *testing.T) {
	srv, hub := newHubServer(t)
	sess := NewSession("s")
	req := Request{Session: sess, Principal: abi.Principal{ID: "u"}}
	serve := func(msg string) Reply { return srv.ServeBytes(context.Background(), req, []byte(msg)) }
	init := serve(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if !strings.Contains(string(init.Msg), `"resources":{"subscribe":true,"listChanged":true}`) || !strings.Contains(string(init.Msg), `"tools":{"listChanged":true}`) {
		t.Errorf("capabilities: %s", init.Msg)
	}
	sub := sess.Subscription()
	if sub == nil {
		t.Fatal("no session subscription after initialize")
	}
	if r := serve(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); string(r.Msg) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("subscribe: %s", r.Msg)
	}
	hub.Publish(notify.ResourceUpdated, "test://watched-resource")
	hub.Publish(notify.ToolsListChanged, "")
	var got []string
	for _, ev := range sub.Take() {
		got = append(got, string(EncodeEvent(ev, nil)))
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session events (-want +got):\n%s", diff)
	}
	if r := serve(`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"test://watched-resource"}}`); r.Err != nil {
		t.Errorf("unsubscribe: %s", r.Msg)
	}
	hub.Publish(notify.ResourceUpdated, "test://watched-resource")
	if evs := sub.Take(); len(evs) != 0 {
		t.Errorf("after unsubscribe: %v", evs)
	}
	if r := serve(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{}}`); r.Err == nil || r.Err.Code != CodeInvalidParams {
		t.Errorf("subscribe without uri: %s", r.Msg)
	}
	sess.Close()
	select {
	case <-sub.Done():
	default:
		t.Error("closing the session left its subscription open")
	}
}
