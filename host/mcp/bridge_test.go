package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// asker is a provider whose tools ask the client for input: "ask" one
// elicitation, "sample" one sampling request, "twice" two rounds of
// elicitation (its progress in the sealed state).
func asker() *catalogtest.Provider {
	elicit := func(msg string) abi.InputRequest {
		return abi.InputRequest{Method: abi.InputElicit, Params: json.RawMessage(
			`{"message":` + string(mustJSON(msg)) + `,"requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}`)}
	}
	return &catalogtest.Provider{
		M: abi.Manifest{Name: "asker", Version: "1.0.0", ABI: abi.Major, Tools: []abi.Tool{
			{Name: "ask", InputSchema: []byte(`{"type":"object"}`)},
			{Name: "sample", InputSchema: []byte(`{"type":"object"}`)},
			{Name: "twice", InputSchema: []byte(`{"type":"object"}`)},
		}},
		Tool: func(ctx context.Context, r abi.CallToolRequest) (any, error) {
			answer := func(key string) string {
				return strings.ReplaceAll(string(r.InputResponses[key]), `"`, `'`)
			}
			switch {
			case r.Name == "ask" && r.InputResponses["q"] != nil:
				return textResult("got " + answer("q")), nil
			case r.Name == "ask":
				return nil, &abi.InputRequired{InputRequests: map[string]abi.InputRequest{"q": elicit("Your v?")}}
			case r.Name == "sample" && r.InputResponses["s"] != nil:
				return textResult("got " + answer("s")), nil
			case r.Name == "sample":
				return nil, &abi.InputRequired{InputRequests: map[string]abi.InputRequest{"s": {Method: abi.InputSample,
					Params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`)}}}
			case r.State == "" && r.InputResponses["a"] == nil:
				return nil, &abi.InputRequired{State: "one", InputRequests: map[string]abi.InputRequest{"a": elicit("First?")}}
			case r.State == "one":
				return nil, &abi.InputRequired{State: "two:" + answer("a"), InputRequests: map[string]abi.InputRequest{"b": elicit("Second?")}}
			default:
				return textResult(r.State + " then " + answer("b")), nil
			}
		},
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func textResult(s string) *abi.CallToolResult {
	return &abi.CallToolResult{Content: []json.RawMessage{mustJSON(map[string]string{"type": "text", "text": s})}}
}

// fakeClient is a 2025 client on a session: it records the messages the
// server sends ahead of a response and answers server requests with
// answer (nil: never answers).
type fakeClient struct {
	srv    *Server
	sess   *Session
	answer func(method string) string // the response's members after the id, e.g. `"result":{…}`

	mu   sync.Mutex
	sent []string // methods of the messages received
}

func (c *fakeClient) notify(msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return err
	}
	c.mu.Lock()
	c.sent = append(c.sent, m.Method)
	c.mu.Unlock()
	if m.ID == nil || c.answer == nil {
		return nil
	}
	resp := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + c.answer(m.Method) + `}`
	go c.srv.ServeBytes(context.Background(), Request{Session: c.sess}, []byte(resp))
	return nil
}

func (c *fakeClient) methods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

func legacySession(t *testing.T, srv *Server, caps string) *Session {
	t.Helper()
	sess := NewSession("s")
	r := srv.ServeBytes(context.Background(), Request{Session: sess},
		[]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`))
	if r.Err != nil {
		t.Fatalf("initialize: %s", r.Msg)
	}
	return sess
}

func TestInputBridge(t *testing.T) {
	accept := func(method string) string {
		switch method {
		case "sampling/createMessage":
			return `"result":{"role":"assistant","content":{"type":"text","text":"hey"},"model":"m"}`
		}
		return `"result":{"action":"accept","content":{"v":"x"}}`
	}
	tests := []struct {
		name    string
		caps    string
		tool    string
		answer  func(string) string
		want    string   // substring of the response
		wantErr int      // error code, 0 for success
		sent    []string // methods the client received
	}{
		{"accept", `{"elicitation":{}}`, "ask", accept,
			`got {'action':'accept','content':{'v':'x'}}`, 0, []string{"elicitation/create"}},
		{"decline", `{"elicitation":{}}`, "ask", func(string) string { return `"result":{"action":"decline"}` },
			`got {'action':'decline'}`, 0, []string{"elicitation/create"}},
		{"sampling", `{"sampling":{}}`, "sample", accept,
			`got {'role':'assistant'`, 0, []string{"sampling/createMessage"}},
		{"two rounds", `{"elicitation":{"form":{}}}`, "twice", accept,
			`two:{'action':'accept','content':{'v':'x'}} then {'action':'accept'`, 0, []string{"elicitation/create", "elicitation/create"}},
		{"never answers", `{"elicitation":{}}`, "ask", nil,
			`did not answer elicitation/create`, CodeInternalError, []string{"elicitation/create", "notifications/cancelled"}},
		{"client error", `{"elicitation":{}}`, "ask", func(string) string { return `"error":{"code":-32601,"message":"no"}` },
			`"clientError":{"code":-32601,"message":"no"}`, CodeInternalError, []string{"elicitation/create"}},
		{"invalid answer", `{"elicitation":{}}`, "ask", func(string) string { return `"result":{"action":"maybe"}` },
			`inputResponses`, CodeInvalidParams, []string{"elicitation/create"}},
		{"capability not declared", `{"elicitation":{}}`, "sample", accept,
			`"requiredCapabilities":{"sampling":{}}`, CodeInvalidRequest, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv := NewServer(catalog.New(set), Options{InputTimeout: 100 * time.Millisecond})
			c := &fakeClient{srv: srv, sess: legacySession(t, srv, tt.caps), answer: tt.answer}
			r := srv.ServeBytes(context.Background(), Request{Session: c.sess, Notify: c.notify},
				[]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tt.tool+`"}}`))
			if !strings.Contains(string(r.Msg), tt.want) {
				t.Errorf("response %s lacks %s", r.Msg, tt.want)
			}
			code := 0
			if r.Err != nil {
				code = r.Err.Code
			}
			if code != tt.wantErr {
				t.Errorf("error code %d, want %d (%s)", code, tt.wantErr, r.Msg)
			}
			if diff := cmp.Diff(tt.sent, c.methods()); diff != "" {
				t.Errorf("messages to the client (-want +got):\n%s", diff)
			}
			c.sess.mu.Lock()
			n := len(c.sess.pending)
			c.sess.mu.Unlock()
			if n != 0 {
				t.Errorf("%d requests still pending", n)
			}
		})
	}
}

// TestInputBridgeOtherSession checks that a response naming this
// session's request id, delivered to another session, is ignored.
func TestInputBridgeOtherSession(t *testing.T) {
	set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(catalog.New(set), Options{InputTimeout: 200 * time.Millisecond})
	victim := legacySession(t, srv, `{"elicitation":{}}`)
	intruder := legacySession(t, srv, `{"elicitation":{}}`)
	delivered := make(chan bool, 1)
	notify := func(msg []byte) error {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(msg, &m)
		if m.ID != nil {
			resp, _ := Decode([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"v":"forged"}}}`))
			delivered <- intruder.Deliver(resp)
		}
		return nil
	}
	r := srv.ServeBytes(context.Background(), Request{Session: victim, Notify: notify},
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`))
	if <-delivered {
		t.Error("another session's response was routed")
	}
	if r.Err == nil || strings.Contains(string(r.Msg), "forged") {
		t.Errorf("response %s: want the bounded timeout error", r.Msg)
	}
}

// TestInputBridgeCancel checks that cancelling the original request ends
// the wait: no response, and the client is told.
func TestInputBridgeCancel(t *testing.T) {
	set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(catalog.New(set), Options{InputTimeout: time.Minute})
	c := &fakeClient{srv: srv, sess: legacySession(t, srv, `{"elicitation":{}}`)}
	ctx, cancel := context.WithCancel(context.Background())
	asked := make(chan struct{})
	notify := func(msg []byte) error {
		err := c.notify(msg)
		if strings.Contains(string(msg), `"elicitation/create"`) {
			close(asked)
		}
		return err
	}
	go func() { <-asked; cancel() }()
	r := srv.ServeBytes(ctx, Request{Session: c.sess, Notify: notify},
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`))
	if r.Msg != nil {
		t.Errorf("a cancelled request was answered: %s", r.Msg)
	}
	if diff := cmp.Diff([]string{"elicitation/create", "notifications/cancelled"}, c.methods()); diff != "" {
		t.Errorf("messages to the client (-want +got):\n%s", diff)
	}
}

// TestInputBridgeSessionEnds checks that closing the session fails the wait.
func TestInputBridgeSessionEnds(t *testing.T) {
	set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(catalog.New(set), Options{InputTimeout: time.Minute})
	sess := legacySession(t, srv, `{"elicitation":{}}`)
	notify := func([]byte) error { go sess.Close(); return nil }
	r := srv.ServeBytes(context.Background(), Request{Session: sess, Notify: notify},
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`))
	if r.Err == nil || r.Err.Code != CodeInvalidRequest {
		t.Errorf("response %s: want the session-ended error", r.Msg)
	}
}

// TestModernNeverBridges checks that a 2026-07-28 request gets
// input_required and the client no server-to-client request.
func TestModernNeverBridges(t *testing.T) {
	set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(catalog.New(set), Options{InputTimeout: time.Minute})
	c := &fakeClient{srv: srv, sess: legacySession(t, srv, `{"elicitation":{}}`)}
	r := srv.ServeBytes(context.Background(), Request{Session: c.sess, Notify: c.notify},
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`))
	if !strings.Contains(string(r.Msg), `"resultType":"input_required"`) {
		t.Errorf("response %s is not input_required", r.Msg)
	}
	if got := c.methods(); len(got) != 0 {
		t.Errorf("the client was sent %v", got)
	}
}
