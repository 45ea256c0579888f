package interop

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The cluster's wire benchmarks (issue 14), run by `make bench-cluster`
// with CORRAL_TEST_CLUSTER=1: real bin/corral processes, a real NATS server
// process and bin/corral-rr, on loopback. Each shape is set beside the same
// work on one process in the same run.

// benchListeners is how many listen streams BenchmarkClusterNotify opens.
const benchListeners = 1000

// benchGrants grant the bench fixture notify.
const benchGrants = "plugin:\n  bfx000:\n    grants:\n      notify: true\n"

// benchServers are the replicas of one benchmark shape and where a client
// sends requests that any replica may serve (the proxy, or the one
// process).
type benchServers struct {
	replicas []string
	front    string
	stop     func()
}

// startBenchShape starts n replicas of a cluster (n = 3) or one process
// without a cluster (n = 1) serving the bench fixture, with a proxy in
// front when proxied.
func startBenchShape(b *testing.B, n int, proxied bool) benchServers {
	b.Helper()
	if !clusterMode {
		b.Skip("the cluster benchmarks run under make bench-cluster (CORRAL_TEST_CLUSTER=1)")
	}
	if why := missingBuild(corralBin, fixtureWasm); why != "" {
		b.Fatal(why)
	}
	dir := b.TempDir()
	copyFile(b, fixtureWasm, filepath.Join(dir, "bfx000.wasm"))
	if n == 3 {
		c, err := startCluster(dir, "bench", benchGrants)
		if err != nil {
			b.Fatal(err)
		}
		s := benchServers{front: c.proxy.url, stop: c.stop}
		for _, r := range c.replicas {
			s.replicas = append(s.replicas, r.url)
		}
		return s
	}
	cfg := filepath.Join(dir, "corral.yaml")
	yaml := fmt.Sprintf("http:\n  trustedProxies: [127.0.0.1/32]\nplugins:\n  cacheDir: %s\n%s",
		filepath.Join(repoRoot, "build", "cluster", "cache"), benchGrants)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	p, err := startHTTPServer("--config", cfg, "--plugins", dir)
	if err != nil {
		b.Fatal(err)
	}
	s := benchServers{replicas: []string{p.url}, front: p.url, stop: p.stop}
	if proxied {
		rr, err := startProxy([]string{p.url})
		if err != nil {
			p.stop()
			b.Fatal(err)
		}
		s.front, s.stop = rr.url, func() { rr.stop(); p.stop() }
	}
	return s
}

// benchClient is an HTTP client with room for every stream a benchmark
// holds open at once.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0}}

// benchPost sends one 2026-07-28 request of method (on name) to url.
func benchPost(url, method, name, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h := modernHeaders(method, name)
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := benchClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: status %d: %s", method, resp.StatusCode, msg)
	}
	return resp, nil
}

// benchCall sends a request and reads its whole answer.
func benchCall(url, method, name, body string) error {
	resp, err := benchPost(url, method, name, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// BenchmarkClusterNotify: the latency from a tool call that notifies
// (the fixture's touch) to each of 1,000 listen streams hearing
// notifications/resources/updated, with the streams spread over three
// replicas and the call made on the second (the event crosses NATS to
// the other two), against the same 1,000 streams on one process. One op is
// one notification reaching all 1,000; p50 and p99 are over every stream
// of every op.
func BenchmarkClusterNotify(b *testing.B) {
	for _, shape := range []struct {
		name string
		n    int
	}{{"one-process", 1}, {"three-replicas", 3}} {
		b.Run(shape.name, func(b *testing.B) {
			s := startBenchShape(b, shape.n, false)
			defer s.stop()
			arrived := make(chan time.Time, benchListeners)
			var streams sync.WaitGroup
			var bodies []io.Closer
			defer func() {
				for _, c := range bodies {
					c.Close()
				}
				streams.Wait()
			}()
			listen := `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{` + modernMeta +
				`,"notifications":{"resourceSubscriptions":["bfx000://doc"]}}}`
			for i := range benchListeners {
				resp, err := benchPost(s.replicas[i%len(s.replicas)], "subscriptions/listen", "", listen)
				if err != nil {
					b.Fatalf("listen %d: %v", i, err)
				}
				bodies = append(bodies, resp.Body)
				events := bufio.NewReader(resp.Body)
				if ack, err := nextMessage(events); err != nil || ack.Method != "notifications/subscriptions/acknowledged" {
					b.Fatalf("listen %d: %+v %v", i, ack, err)
				}
				streams.Add(1)
				go func() {
					defer streams.Done()
					for {
						m, err := nextMessage(events)
						if err != nil {
							return
						}
						if m.Method == "notifications/resources/updated" {
							arrived <- time.Now()
						}
					}
				}()
			}
			caller := s.replicas[1%len(s.replicas)]
			touch := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"touch"}}`
			lat := make([]time.Duration, 0, b.N*benchListeners)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := benchCall(caller, "tools/call", "touch", touch); err != nil {
					b.Fatal(err)
				}
				for range benchListeners {
					select {
					case at := <-arrived:
						lat = append(lat, at.Sub(start))
					case <-time.After(30 * time.Second):
						b.Fatalf("%d of %d streams heard the update", len(lat)%benchListeners, benchListeners)
					}
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkClusterThroughput: resources/read of the fixture's 1 KiB
// document through bin/corral-rr, 8 clients at once, in front of one
// replica and in front of three. On two cores the three replicas share
// the same cores as the one, so the figure says what the proxy and the
// cluster cost per request, not how a cluster grows.
func BenchmarkClusterThroughput(b *testing.B) {
	for _, shape := range []struct {
		name string
		n    int
	}{{"proxy-one-process", 1}, {"proxy-three-replicas", 3}} {
		b.Run(shape.name, func(b *testing.B) {
			s := startBenchShape(b, shape.n, true)
			defer s.stop()
			read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{` + modernMeta + `,"uri":"bfx000://doc"}}`
			for range 32 { // every replica's instances warm before the clock starts
				if err := benchCall(s.front, "resources/read", "bfx000://doc", read); err != nil {
					b.Fatal(err)
				}
			}
			b.SetParallelism(4) // 8 clients on GOMAXPROCS=2
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := benchCall(s.front, "resources/read", "bfx000://doc", read); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
