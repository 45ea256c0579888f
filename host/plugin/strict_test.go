package plugin

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// TestFetchArgsStrict: an http_fetch request with a repeated member, or
// one that matches a known member only by case, is refused as invalid
// before anything is dialled; encoding/json took the last one, so a guest
// could show one URL or method to a reader of its request and fetch
// another.
func TestFetchArgsStrict(t *testing.T) {
	fe := newFetcher([]string{"granted.example", "other.example"}, false, Limits{HTTPMaxBytes: 1 << 10, HTTPTimeout: time.Second, HTTPMaxRedirects: 2})
	var mu sync.Mutex
	var dialled []string
	fe.transport.DialContext = func(_ context.Context, _, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return nil, errors.New("no network here")
	}
	for _, raw := range []string{
		`{"url":"http://granted.example/","url":"http://other.example/"}`,
		`{"url":"http://granted.example/","URL":"http://other.example/"}`,
		`{"method":"GET","Method":"POST","url":"http://granted.example/"}`,
		`{"url":"http://granted.example/","headers":{"X-A":"1","X-A":"2"}}`,
		`{"url":"http://granted.example/","\u0075rl":"http://other.example/"}`,
	} {
		t.Run(raw, func(t *testing.T) {
			mu.Lock()
			dialled = dialled[:0]
			mu.Unlock()
			_, err := fe.fetch(context.Background(), []byte(raw))
			var ee *errnoError
			if !errors.As(err, &ee) || ee.errno != abi.ErrnoInvalid {
				t.Errorf("fetch = %v, want %s", err, abi.ErrnoString(abi.ErrnoInvalid))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(dialled) > 0 {
				t.Errorf("dialled %v", dialled)
			}
		})
	}
}
