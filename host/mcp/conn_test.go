package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// blocking serves one tool, "block", that returns only when its call is
// cancelled.
func blocking() *catalogtest.Provider {
	return &catalogtest.Provider{
		M: abi.Manifest{Name: "blocking", Version: "1.0.0", ABI: abi.Major,
			Tools: []abi.Tool{{Name: "block", InputSchema: []byte(`{"type":"object"}`)}}},
		Tool: func(ctx context.Context, _ abi.CallToolRequest) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
}

func blockCall(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block",%s}}`, id, modernMeta)
}

// recorder is a Send that fails the test once the Conn is closed.
type recorder struct {
	mu     sync.Mutex
	msgs   []string
	closed atomic.Bool
	t      *testing.T
}

func (r *recorder) send(msg []byte) error {
	if r.closed.Load() {
		r.t.Errorf("Send after Close: %s", msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, string(msg))
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// TestConnCancelAndClose: notifications/cancelled ends a request without a
// response; a reader waiting for a slot is released by Close, which waits
// for the requests in flight once they are cancelled, and nothing is sent
// after Close returns.
func TestConnCancelAndClose(t *testing.T) {
	srv := newServer(t, blocking())
	rec := &recorder{t: t}
	c := srv.NewConn(ConnOptions{MaxConcurrent: 2, Send: rec.send})
	ctx, cancel := context.WithCancel(context.Background())

	c.Handle(ctx, blockCall(1))
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
	c.Handle(ctx, blockCall(2))
	c.Handle(ctx, blockCall(3)) // waits for the slot 1 frees when it ends
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		c.Handle(ctx, blockCall(4)) // both slots held by 2 and 3: waits
	}()
	cancel() // the connection is gone: 2 and 3 end, 4 gives up
	<-waiting
	c.Close()
	rec.closed.Store(true)
	c.Handle(context.Background(), blockCall(5)) // after Close: nothing
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.msgs) != 0 {
		t.Errorf("cancelled requests were answered: %s", strings.Join(rec.msgs, "\n"))
	}
}

// TestConnListenBound: the MaxListens+1st listen is refused at once with
// -32600, the others are acknowledged, and Close ends them.
func TestConnListenBound(t *testing.T) {
	srv, hub := newHubServer(t)
	defer hub.Close()
	rec := &recorder{t: t}
	c := srv.NewConn(ConnOptions{Send: rec.send})
	for i := range MaxListens + 1 {
		c.Handle(context.Background(), fmt.Appendf(nil,
			`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":{"toolsListChanged":true}}}`, i, modernMeta))
	}
	for deadline := time.Now().Add(5 * time.Second); rec.count() < MaxListens+1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // the acknowledgements go out from the streams' goroutines
	}
	c.Close()
	rec.closed.Store(true)
	acks, refused := 0, 0
	for _, m := range rec.msgs {
		switch {
		case strings.Contains(m, "notifications/subscriptions/acknowledged"):
			acks++
		case strings.Contains(m, `"code":-32600`) && strings.Contains(m, "listen streams per connection"):
			refused++
		default:
			t.Errorf("unexpected message: %s", m)
		}
	}
	if acks != MaxListens || refused != 1 {
		t.Errorf("%d acknowledged, %d refused; want %d and 1", acks, refused, MaxListens)
	}
}
