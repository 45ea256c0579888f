package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// sessionClient is who sends a request in the session tests: a principal
// with a token, or (principal "") an anonymous client whose trusted proxy
// names address in X-Forwarded-For.
type sessionClient struct{ principal, address string }

func (c sessionClient) request(t *testing.T, url, sid, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.principal != "" {
		req.Header.Set("Authorization", "Bearer token-of-"+c.principal)
	}
	if c.address != "" {
		req.Header.Set("X-Forwarded-For", c.address)
	}
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	return req
}

// sessionServer serves the test server with the given session bounds;
// principals come from the bearer token, the loopback peer is a trusted
// proxy when trustLoopback is set.
func sessionServer(t *testing.T, max, perClient int, trustLoopback bool) (*HTTPHandler, string) {
	t.Helper()
	opts := HTTPOptions{
		MaxSessions: max, MaxSessionsPerClient: perClient,
		PrincipalFunc: func(r *http.Request) (abi.Principal, error) {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer token-of-"); ok {
				return abi.Principal{ID: tok}, nil
			}
			return abi.Principal{ID: "anonymous"}, nil
		},
	}
	if trustLoopback {
		opts.Proxies = TrustedProxies{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	}
	h := NewHTTPHandler(newTestServer(t), opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return h, ts.URL
}

// open initializes a session as c; it returns the session id ("" when
// refused), the status and the body.
func open(t *testing.T, url string, c sessionClient) (sid string, status int, body string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(c.request(t, url, "", legacyInit))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get(HeaderSessionID), resp.StatusCode, string(b)
}

// alive reports whether sid still answers a ping for c.
func alive(t *testing.T, url string, c sessionClient, sid string) bool {
	t.Helper()
	resp, err := http.DefaultClient.Do(c.request(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return false
	}
	t.Fatalf("ping: status %d", resp.StatusCode)
	return false
}

// TestSessionQuotas: a client over its session quota loses its own least
// recently used session, never another client's; when every slot is in
// use by clients within their quotas a new session is refused with 503;
// anonymous clients are told apart by address only behind a trusted proxy
// (issue 13 item 2: sessions were evicted least recently used across all
// principals).
func TestSessionQuotas(t *testing.T) {
	a, b := sessionClient{principal: "a"}, sessionClient{principal: "b"}
	t.Run("over quota evicts own", func(t *testing.T) {
		h, url := sessionServer(t, 8, 3, false)
		sa, _, _ := open(t, url, a)
		var bs []string
		for range 20 {
			sid, status, body := open(t, url, b)
			if status != http.StatusOK {
				t.Fatalf("b's initialize: %d %s", status, body)
			}
			bs = append(bs, sid)
		}
		if !alive(t, url, a, sa) {
			t.Error("a's session ended by b's")
		}
		for i, sid := range bs {
			if want := i >= len(bs)-3; alive(t, url, b, sid) != want {
				t.Errorf("b's session %d alive = %v, want %v", i, !want, want)
			}
		}
		if st := h.SessionStats(); st.Open != 4 || st.Evicted != 17 || st.Refused != 0 {
			t.Errorf("stats %+v, want 4 open, 17 evicted, 0 refused", st)
		}
	})
	t.Run("use refreshes", func(t *testing.T) {
		_, url := sessionServer(t, 8, 2, false)
		s1, _, _ := open(t, url, a)
		s2, _, _ := open(t, url, a)
		alive(t, url, a, s1) // s1 is now the more recently used
		open(t, url, a)
		if !alive(t, url, a, s1) || alive(t, url, a, s2) {
			t.Error("the session evicted was not the least recently used")
		}
	})
	t.Run("full refuses", func(t *testing.T) {
		h, url := sessionServer(t, 4, 2, false)
		var as []string
		for _, c := range []sessionClient{a, a, b, b} {
			sid, _, _ := open(t, url, c)
			if c == a {
				as = append(as, sid)
			}
		}
		sid, status, body := open(t, url, sessionClient{principal: "c"})
		if sid != "" || status != http.StatusServiceUnavailable || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "all 4 sessions are in use") {
			t.Errorf("c's initialize with every slot in use: %q %d %s; want no session, 503, -32600", sid, status, body)
		}
		for _, sid := range as {
			if !alive(t, url, a, sid) {
				t.Error("a refused c's session by losing its own")
			}
		}
		if h.SessionStats().Refused != 1 {
			t.Errorf("stats %+v, want 1 refused", h.SessionStats())
		}
		// A slot given back is free for c.
		resp, err := http.DefaultClient.Do(func() *http.Request {
			r := a.request(t, url, as[0], "")
			r.Method = http.MethodDelete
			return r
		}())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sid, status, _ := open(t, url, sessionClient{principal: "c"}); sid == "" || status != http.StatusOK {
			t.Errorf("c's initialize after a's DELETE: %d", status)
		}
	})
	t.Run("anonymous by address behind a trusted proxy", func(t *testing.T) {
		_, url := sessionServer(t, 8, 2, true)
		x, y := sessionClient{address: "192.0.2.1"}, sessionClient{address: "192.0.2.2"}
		sy, _, _ := open(t, url, y)
		for range 5 {
			open(t, url, x)
		}
		if !alive(t, url, y, sy) {
			t.Error("one anonymous address ended another's session")
		}
	})
	t.Run("forwarding header ignored from an untrusted peer", func(t *testing.T) {
		_, url := sessionServer(t, 8, 2, false)
		x, y := sessionClient{address: "192.0.2.1"}, sessionClient{address: "192.0.2.2"}
		sy, _, _ := open(t, url, y)
		for range 2 {
			open(t, url, x)
		}
		if alive(t, url, y, sy) {
			t.Error("an untrusted peer chose its quota with X-Forwarded-For")
		}
	})
}
