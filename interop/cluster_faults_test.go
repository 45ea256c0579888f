package interop

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The cluster's fault tests (issue 14 item 6), under make test-cluster:
// NATS stopped and started under load, a replica killed under load, and
// every replica replaced in turn under load.

// loadGen sends 2026-07-28 requests that need nothing of NATS through the
// proxy, from several workers, until finish.
type loadGen struct {
	sent, failed atomic.Int64
	mu           sync.Mutex
	samples      []string // the first failures
	stop         chan struct{}
	wg           sync.WaitGroup
}

const loadWorkers = 2

func startLoad(t *testing.T, url string) *loadGen {
	t.Helper()
	l := &loadGen{stop: make(chan struct{})}
	bodies := []struct{ method, name, body string }{
		{"tools/call", "test_simple_text", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"test_simple_text"}}`},
		{"resources/read", "test://static-text", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{` + modernMeta + `,"uri":"test://static-text"}}`},
	}
	for w := range loadWorkers {
		l.wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				b := bodies[i%len(bodies)]
				req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(b.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for j, h := 0, modernHeaders(b.method, b.name); j+1 < len(h); j += 2 {
					req.Header.Set(h[j], h[j+1])
				}
				l.sent.Add(1)
				resp, err := client.Do(req)
				var problem string
				if err != nil {
					problem = err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
						problem = fmt.Sprintf("%s via %s: %.200s", resp.Status, resp.Header.Get("Corral-Rr-Backend"), body)
					}
				}
				if problem != "" {
					l.failed.Add(1)
					l.mu.Lock()
					if len(l.samples) < 5 {
						l.samples = append(l.samples, time.Now().Format("15:04:05.000 ")+b.method+": "+problem)
					}
					l.mu.Unlock()
				}
			}
		})
	}
	return l
}

// finish stops the load and returns what it sent and what failed.
func (l *loadGen) finish() (sent, failed int64, samples []string) {
	close(l.stop)
	l.wg.Wait()
	return l.sent.Load(), l.failed.Load(), l.samples
}

// listener is a 2026-07-28 listen stream on tools list_changed and
// bfx000://doc.
type listener struct {
	backend int // the proxy's Corral-Rr-Backend, or -1
	got     chan wireMsg
	resp    *http.Response
}

func listenAt(t *testing.T, url string) *listener {
	t.Helper()
	w := &wire{t: t}
	resp := w.post(url, `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["bfx000://doc"]}}}`,
		modernHeaders("subscriptions/listen", "")...)
	t.Cleanup(func() { resp.Body.Close() })
	events := bufio.NewReader(resp.Body)
	if ack, err := nextMessage(events); err != nil || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen at %s: %+v %v", url, ack, err)
	}
	l := &listener{backend: -1, got: make(chan wireMsg, 64), resp: resp}
	if b, err := strconv.Atoi(resp.Header.Get("Corral-Rr-Backend")); err == nil {
		l.backend = b
	}
	go func() {
		defer close(l.got)
		for {
			m, err := nextMessage(events)
			if err != nil {
				return
			}
			l.got <- m
		}
	}()
	return l
}

// expect waits up to within for a notification method, calling poke (if
// set) every half second meanwhile; other notifications are skipped.
func (l *listener) expect(t *testing.T, method string, within time.Duration, poke func()) {
	t.Helper()
	deadline := time.After(within)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	if poke != nil {
		poke()
	}
	for {
		select {
		case m, ok := <-l.got:
			if !ok {
				t.Fatalf("the listen stream ended before %s", method)
			}
			if m.Method == method {
				return
			}
		case <-tick.C:
			if poke != nil {
				poke()
			}
		case <-deadline:
			t.Fatalf("no %s within %v", method, within)
		}
	}
}

// ended waits for the stream to end.
func (l *listener) ended(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-l.got:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the listen stream still open after %v", within)
		}
	}
}

// touch calls the fixture's touch tool at url, which notifies
// bfx000://doc's subscribers.
func touch(t *testing.T, url string) {
	t.Helper()
	w := &wire{t: t}
	if m := w.call(url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+modernMeta+`,"name":"touch"}}`, modernHeaders("tools/call", "touch")...); m.Error != nil {
		t.Logf("touch at %s: %+v", url, m.Error)
	}
}

// TestClusterFaultNATSRestart: NATS stopped and started under load. No
// request to a feature that needs nothing of NATS fails; once NATS is
// back, a replica's listeners hear list_changed (resync: events may have
// been lost), and events cross the bus again.
func TestClusterFaultNATSRestart(t *testing.T) {
	c := ownCluster(t)
	l := listenAt(t, c.replicas[0].url)
	ld := startLoad(t, c.proxy.url)
	c.nats.stop()
	time.Sleep(2 * time.Second) // the replicas serve alone meanwhile
	if err := c.restartNATS(); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "notifications/tools/list_changed", 20*time.Second, nil)
	l.expect(t, "notifications/resources/updated", 20*time.Second, func() { touch(t, c.replicas[1].url) })
	sent, failed, samples := ld.finish()
	t.Logf("%d requests through the NATS restart, %d failed", sent, failed)
	if failed > 0 || sent == 0 {
		t.Errorf("%d of %d requests failed: %v", failed, sent, samples)
	}
}

// TestClusterFaultReplicaKilled: the replica holding a listen stream is
// killed under load; the client's stream ends, it listens again through
// the proxy, lands on another replica and hears the next event. Only
// requests in flight on the killed replica may fail.
func TestClusterFaultReplicaKilled(t *testing.T) {
	c := ownCluster(t)
	ld := startLoad(t, c.proxy.url)
	l := listenAt(t, c.proxy.url)
	if l.backend < 0 {
		t.Fatal("the proxy named no backend")
	}
	k := l.backend
	_ = c.replicas[k].cmd.Process.Signal(syscall.SIGKILL)
	<-c.replicas[k].exited
	l.ended(t, 10*time.Second)
	again := listenAt(t, c.proxy.url)
	if again.backend == k {
		t.Fatalf("listened again on the killed replica r%d", k+1)
	}
	again.expect(t, "notifications/resources/updated", 20*time.Second, func() { touch(t, c.proxy.url) })
	if err := c.restart(k); err != nil {
		t.Fatal(err)
	}
	sent, failed, samples := ld.finish()
	t.Logf("%d requests while r%d was killed and restarted, %d failed", sent, k+1, failed)
	if failed > loadWorkers || sent == 0 {
		t.Errorf("%d of %d requests failed, more than the %d that can be in flight on the killed replica: %v", failed, sent, loadWorkers, samples)
	}
}

// TestClusterFaultRollingReplacement: each replica in turn is stopped
// (SIGTERM) and started again under load: no request fails, and a
// 2025-11-25 session opened before is still served after all three were
// replaced (its record is in NATS, its token opens under the shared
// secret).
func TestClusterFaultRollingReplacement(t *testing.T) {
	c := ownCluster(t)
	w := &wire{t: t}
	resp := w.post(c.proxy.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rolling","version":"1"}}}`)
	resp.Body.Close()
	if w.sid = resp.Header.Get("Mcp-Session-Id"); w.sid == "" {
		t.Fatal("no session")
	}
	ld := startLoad(t, c.proxy.url)
	for i := range c.replicas {
		c.replicas[i].stop()
		if err := c.restart(i); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // the proxy's checks see it back
	}
	sent, failed, samples := ld.finish()
	t.Logf("%d requests through the rolling replacement, %d failed", sent, failed)
	if failed > 0 || sent == 0 {
		t.Errorf("%d of %d requests failed: %v", failed, sent, samples)
	}
	for i, r := range c.replicas {
		if m := w.call(r.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); m.Error != nil || m.Result == nil {
			t.Errorf("the session on the new r%d: %+v", i+1, m)
		}
	}
}
