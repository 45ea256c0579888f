package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// FuzzFetchArgs decodes arbitrary http_fetch arguments, as a guest could
// pass them. Whatever the bytes, the only host the fetcher ever dials is
// the granted one (the dialer is replaced, so nothing leaves the process).
func FuzzFetchArgs(f *testing.F) {
	for _, s := range []string{
		`{"method":"GET","url":"http://granted.example/x"}`,
		`{"method":"POST","url":"https://granted.example:8443/","body":"aGk=","headers":{"Host":"evil"}}`,
		`{"url":"http://evil.example/"}`,
		`{"url":"http://granted.example@evil.example/"}`,
		`{"url":"http://evil.example#@granted.example/"}`,
		`{"url":"http://127.0.0.1/"}`,
		`{"url":"file:///etc/passwd"}`,
		`{"method":"DELETE","url":"http://granted.example/"}`,
		`{"url":"http://GRANTED.example./"}`,
		`not json`,
	} {
		f.Add([]byte(s))
	}
	fe := newFetcher([]string{"granted.example"}, false, Limits{HTTPMaxBytes: 1 << 10, HTTPTimeout: time.Second, HTTPMaxRedirects: 2})
	var mu sync.Mutex
	var dialled []string
	errNoNet := errors.New("no network in fuzzing")
	fe.transport.DialContext = func(_ context.Context, _, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return nil, errNoNet
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		mu.Lock()
		dialled = dialled[:0]
		mu.Unlock()
		out, err := fe.fetch(context.Background(), raw)
		if err == nil {
			var resp abi.HTTPResponse
			if json.Unmarshal(out, &resp) != nil {
				t.Fatalf("fetch(%q) answered undecodable %q", raw, out)
			}
			t.Fatalf("fetch(%q) succeeded without a network", raw)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range dialled {
			host, _, _ := net.SplitHostPort(a)
			if !strings.EqualFold(host, "granted.example") {
				t.Fatalf("fetch(%q) dialled %q", raw, a)
			}
		}
	})
}
