package transport

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
	"github.com/corral-mcp/corral/host/mcp"
)

// askingServer serves one tool, "ask", which elicits a value and answers
// with the client's ElicitResult.
func askingServer(t testing.TB, timeout time.Duration) *mcp.Server {
	t.Helper()
	set, err := catalog.NewSet([]catalog.Provider{asker()}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", InputTimeout: timeout})
}

// asker is the provider of the tool "ask".
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

const initElicit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// serverRequest is a server-to-client request as the client reads it.
type serverRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func TestStdioInputBridge(t *testing.T) {
	tests := []struct {
		name   string
		answer string // the ElicitResult sent back; "" sends nothing
		want   string
	}{
		{"accept", `{"action":"accept","content":{"v":"x"}}`, `answer {\"action\":\"accept\",\"content\":{\"v\":\"x\"}}`},
		{"decline", `{"action":"decline"}`, `answer {\"action\":\"decline\"}`},
		{"no answer", "", `did not answer elicitation/create`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := askingServer(t, 200*time.Millisecond)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			// One slot: the response to the server's request must not need one.
			go func() { done <- ServeStdio(context.Background(), srv, inR, outW, StdioOptions{MaxConcurrent: 1}) }()
			// A bridge that never routes the answer fails the test, not hangs it.
			watchdog := time.AfterFunc(10*time.Second, func() {
				inR.CloseWithError(io.ErrClosedPipe)
				outW.CloseWithError(io.ErrClosedPipe)
			})
			defer watchdog.Stop()
			lines := scanLines(outR)
			write := func(s string) {
				t.Helper()
				if _, err := io.WriteString(inW, s+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			read := func() serverRequest {
				t.Helper()
				if !lines.Scan() {
					t.Fatal("no output")
				}
				var m serverRequest
				if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
					t.Fatalf("%s: %v", lines.Text(), err)
				}
				return m
			}
			write(initElicit)
			read()
			write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			write(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"ask"}}`)
			m := read()
			if m.Method != "elicitation/create" || !strings.HasPrefix(string(m.ID), `"corral-`) {
				t.Fatalf("got %s %s, want an elicitation/create request", m.Method, m.ID)
			}
			if tt.answer != "" {
				// A response to an id nobody waits for is dropped first.
				write(`{"jsonrpc":"2.0","id":"corral-0000","result":{"action":"cancel"}}`)
				write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + tt.answer + `}`)
			} else if c := read(); c.Method != "notifications/cancelled" {
				t.Errorf("got %s, want notifications/cancelled", c.Method)
			}
			if !lines.Scan() {
				t.Fatal("no response")
			}
			if got := lines.Text(); !strings.Contains(got, `"id":"call"`) || !strings.Contains(got, tt.want) {
				t.Errorf("response %s lacks %s", got, tt.want)
			}
			inW.Close()
			if err := <-done; err != nil && !strings.Contains(err.Error(), "closed pipe") {
				t.Errorf("ServeStdio: %v", err)
			}
			outW.Close()
		})
	}
}

// httpSessionInit opens a legacy session declaring elicitation.
func httpSessionInit(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	resp, err := ts.Client().Post(ts.URL, "application/json", strings.NewReader(initElicit))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	if sid == "" {
		t.Fatal("initialize minted no session")
	}
	return sid
}

func postJSON(t *testing.T, ts *httptest.Server, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderSessionID, sid)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// nextEvent returns the data of the next SSE event.
func nextEvent(t *testing.T, r *bufio.Reader) serverRequest {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var m serverRequest
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			return m
		}
	}
}

func TestHTTPInputBridge(t *testing.T) {
	tests := []struct {
		name    string
		answer  string // the ElicitResult posted back; "" posts nothing
		foreign bool   // post the answer under another session
		want    string
	}{
		{"accept", `{"action":"accept","content":{"v":"x"}}`, false, `answer {\"action\":\"accept\",\"content\":{\"v\":\"x\"}}`},
		{"decline", `{"action":"decline"}`, false, `answer {\"action\":\"decline\"}`},
		{"no answer", "", false, `did not answer elicitation/create`},
		{"answer from another session", `{"action":"accept","content":{"v":"forged"}}`, true, `did not answer elicitation/create`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(NewHTTPHandler(askingServer(t, 300*time.Millisecond), HTTPOptions{}))
			defer ts.Close()
			sid := httpSessionInit(t, ts)
			other := httpSessionInit(t, ts)
			call := postJSON(t, ts, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`)
			defer call.Body.Close()
			if ct := call.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q, want the POST switched to an event stream", ct)
			}
			events := bufio.NewReader(call.Body)
			m := nextEvent(t, events)
			if m.Method != "elicitation/create" || m.ID == nil {
				t.Fatalf("first event %s %s, want an elicitation/create request", m.Method, m.ID)
			}
			if tt.answer != "" {
				to := sid
				if tt.foreign {
					to = other
				}
				resp := postJSON(t, ts, to, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+tt.answer+`}`)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("posting the answer: status %d, want 202", resp.StatusCode)
				}
			}
			final := nextEvent(t, events)
			if final.Method == "notifications/cancelled" {
				final = nextEvent(t, events)
			}
			got := string(final.Result) + string(final.Error)
			if string(final.ID) != "5" || !strings.Contains(got, tt.want) {
				t.Errorf("response %s: %s lacks %s", final.ID, got, tt.want)
			}
		})
	}
}

func TestWSInputBridge(t *testing.T) {
	h := NewWSHandler(askingServer(t, time.Minute), WSOptions{MaxConcurrent: 1})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	c := dialWS(t, "ws"+strings.TrimPrefix(ts.URL, "http"))
	wsSend(t, c, initElicit)
	wsRead(t, c)
	wsSend(t, c, `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"ask"}}`)
	var m serverRequest
	if err := json.Unmarshal([]byte(wsRead(t, c)), &m); err != nil || m.Method != "elicitation/create" {
		t.Fatalf("got %s %v, want an elicitation/create request", m.Method, err)
	}
	// One slot, held by the call: the answer must not need one.
	wsSend(t, c, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"v":"ws"}}}`)
	got := wsRead(t, c)
	if want := `answer {\"action\":\"accept\",\"content\":{\"v\":\"ws\"}}`; !strings.Contains(got, `"id":"call"`) || !strings.Contains(got, want) {
		t.Errorf("response %s lacks %s", got, want)
	}
}
