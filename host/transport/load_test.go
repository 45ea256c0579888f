package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/notify"
)

// fanout is a loopback server with a hub, its HTTP and WebSocket
// endpoints, and the publish times of the URIs of the current burst.
type fanout struct {
	hub  *notify.Hub
	ws   *WSHandler
	url  string // http://127.0.0.1:port
	pubs []atomic.Int64

	mu        sync.Mutex
	latencies []time.Duration
	wrong     []string // updates delivered to a stream that did not ask
}

func newFanout(tb testing.TB, uris int, wsOpts WSOptions) *fanout {
	tb.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance()}, catalog.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	f := &fanout{hub: notify.New(notify.Options{}), pubs: make([]atomic.Int64, uris)}
	srv := mcp.NewServer(catalog.New(set), mcp.Options{Version: "load", Hub: f.hub})
	f.ws = NewWSHandler(srv, wsOpts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", NewHTTPHandler(srv, HTTPOptions{}))
	mux.Handle("/ws", f.ws)
	ts := httptest.NewUnstartedServer(mux)
	ts.Listener = smallBufListener{ts.Listener}
	ts.Start()
	tb.Cleanup(func() { f.hub.Close(); f.ws.Close(); ts.Close() })
	f.url = ts.URL
	return f
}

func loadURI(i int) string { return fmt.Sprintf("test://load/%d", i) }

func listenBody(uri string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + wsMeta + `,"notifications":{"resourceSubscriptions":["` + uri + `"]}}}`
}

// received records one update a stream subscribed to want received.
func (f *fanout) received(want int, msg []byte) {
	now := time.Now()
	var n struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.Method != "notifications/resources/updated" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := loadURI(want); n.Params.URI != u && !strings.HasPrefix(n.Params.URI, u+"/") {
		f.wrong = append(f.wrong, n.Params.URI)
		return
	}
	f.latencies = append(f.latencies, now.Sub(time.Unix(0, f.pubs[want].Load())))
}

// httpListener opens one listen stream over Streamable HTTP and records its
// updates until ctx ends; ready is signalled after the acknowledgement.
func (f *fanout) httpListener(ctx context.Context, client *http.Client, want int, ready chan<- error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/mcp", strings.NewReader(listenBody(loadURI(want))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(HeaderMethod, "subscriptions/listen")
	resp, err := client.Do(req)
	if err != nil {
		ready <- err
		return
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	acked := false
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if !acked {
				ready <- fmt.Errorf("stream ended before its ack: %w", err)
			}
			return
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		if !acked {
			acked = true
			ready <- nil
			continue
		}
		f.received(want, data)
	}
}

// wsListener is httpListener over WebSocket; a slow one reads nothing
// after its acknowledgement.
func (f *fanout) wsListener(ctx context.Context, want int, slow bool, ready chan<- error) {
	d := websocket.Dialer{}
	if slow {
		// A small receive buffer: the kernel must not absorb the backlog.
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			return c, err
		}
	}
	c, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(f.url, "http")+"/ws", nil)
	if err != nil {
		ready <- err
		return
	}
	defer c.Close()
	context.AfterFunc(ctx, func() { c.Close() })
	if err := c.WriteMessage(websocket.TextMessage, []byte(listenBody(loadURI(want)))); err != nil {
		ready <- err
		return
	}
	if _, _, err := c.ReadMessage(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	if slow {
		<-ctx.Done()
		return
	}
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		f.received(want, msg)
	}
}

// burst publishes an update of every URI (plus one nobody asked for),
// waits until expect updates have arrived in all, and returns false on
// timeout.
func (f *fanout) burst(uris int, pad string, expect int) bool {
	f.hub.Publish(notify.ResourceUpdated, "test://load/nobody")
	for i := range uris {
		f.pubs[i].Store(time.Now().UnixNano())
		f.hub.Publish(notify.ResourceUpdated, loadURI(i)+pad)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		n := len(f.latencies)
		f.mu.Unlock()
		if n >= expect {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// percentiles returns the p50 and p99 of ds.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// runHTTPFanout opens streams listen streams over HTTP, spread over uris
// URIs, publishes bursts bursts, and checks that every stream got exactly
// its update per burst.
func runHTTPFanout(tb testing.TB, streams, uris, bursts int) (p50, p99 time.Duration) {
	f := newFanout(tb, uris, WSOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	ready := make(chan error, streams)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() { defer wg.Done(); f.httpListener(ctx, client, i%uris, ready) }()
	}
	for range streams {
		if err := <-ready; err != nil {
			tb.Fatalf("open listen stream: %v", err)
		}
	}
	for b := 1; b <= bursts; b++ {
		if !f.burst(uris, "", b*streams) {
			tb.Fatalf("burst %d: %d of %d updates delivered", b, len(f.latencies), b*streams)
		}
	}
	cancel()
	wg.Wait()
	if len(f.wrong) > 0 {
		tb.Fatalf("%d updates reached streams that did not ask for them (first %s)", len(f.wrong), f.wrong[0])
	}
	if len(f.latencies) != bursts*streams {
		tb.Fatalf("%d updates delivered, want exactly %d", len(f.latencies), bursts*streams)
	}
	return percentiles(f.latencies)
}

func TestHTTPListenFanout(t *testing.T) {
	p50, p99 := runHTTPFanout(t, 60, 6, 3)
	t.Logf("60 streams, 3 bursts: fan-out p50 %v, p99 %v", p50, p99)
}

// BenchmarkListenFanout1000 is the load test of `make bench`: 1,000
// concurrent subscriptions/listen streams over Streamable HTTP on loopback
// (10 URIs, 100 streams each), a burst updating every URI per iteration;
// every stream must get exactly its update. It reports the fan-out
// latency, publish to the client reading the event, as p50-ms and p99-ms.
func BenchmarkListenFanout1000(b *testing.B) {
	p50, p99 := runHTTPFanout(b, 1000, 10, max(b.N, 3))
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

// runWSSlowConsumer opens streams WebSocket listen streams plus one that
// stops reading, then publishes bursts of large updates until the slow one
// is disconnected; the others must keep receiving every update.
func runWSSlowConsumer(tb testing.TB, streams, uris int) (p50, p99 time.Duration, bursts int) {
	f := newFanout(tb, uris, WSOptions{SendQueue: 16, WriteTimeout: 250 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan error, streams+1)
	var wg sync.WaitGroup
	for i := range streams + 1 {
		wg.Add(1)
		go func() { defer wg.Done(); f.wsListener(ctx, i%uris, i == streams, ready) }()
	}
	for range streams + 1 {
		if err := <-ready; err != nil {
			tb.Fatalf("open ws listen stream: %v", err)
		}
	}
	// Large updates fill the slow client's socket, then its queue. The
	// subscribed URI's sub-resources make each update distinct.
	pad := "/" + strings.Repeat("x", 4000)
	perBurst := streams // the slow one records nothing
	for bursts = 1; f.ws.SlowDisconnects() == 0; bursts++ {
		if bursts > 500 {
			tb.Fatal("the slow client was never disconnected")
		}
		f.mu.Lock()
		f.latencies = f.latencies[:0]
		f.mu.Unlock()
		for i := range uris {
			f.pubs[i].Store(time.Now().UnixNano())
			f.hub.Publish(notify.ResourceUpdated, loadURI(i)+pad+fmt.Sprint(bursts))
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			f.mu.Lock()
			n := len(f.latencies)
			f.mu.Unlock()
			if n >= perBurst {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("burst %d: %d of %d updates delivered to the reading clients", bursts, n, perBurst)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// One clean burst after the disconnection: the latency the others see.
	f.mu.Lock()
	f.latencies = f.latencies[:0]
	f.mu.Unlock()
	if !f.burst(uris, "", streams) {
		tb.Fatal("updates stopped after the slow client was disconnected")
	}
	cancel()
	wg.Wait()
	if f.ws.SlowDisconnects() != 1 {
		tb.Errorf("%d slow disconnects, want 1 (only the slow client)", f.ws.SlowDisconnects())
	}
	p50, p99 = percentiles(f.latencies)
	return p50, p99, bursts
}

func TestWSSlowConsumerUnderLoad(t *testing.T) {
	p50, p99, bursts := runWSSlowConsumer(t, 40, 4)
	t.Logf("40 ws streams + 1 slow: slow one cut after %d bursts; others p50 %v, p99 %v", bursts, p50, p99)
}

// BenchmarkWSSlowConsumer: 200 WebSocket listen streams and one client
// that stops reading; bursts of 4 KB updates until the slow one is
// disconnected (1008), then the latency the 200 others see.
func BenchmarkWSSlowConsumer(b *testing.B) {
	for range b.N {
		p50, p99, bursts := runWSSlowConsumer(b, 200, 10)
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(bursts), "bursts-to-cut")
	}
}
