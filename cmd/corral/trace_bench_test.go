package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// tracingRounds is how many interleaved pairs (off, on) BenchmarkTracing
// runs; -count would run every "off" before any "on".
var tracingRounds = flag.Int("tracing.rounds", 1, "BenchmarkTracing: the interleaved pairs (off, on) to run")

// tracingFiles makes BenchmarkTracing read a file through the files
// plugin, two host calls a request (file_stat, file_read), instead of a
// static resource that makes none.
var tracingFiles = flag.Bool("tracing.files", false, "BenchmarkTracing: read a file through the files plugin (two host calls) instead of test://static-text")

// BenchmarkTracing measures what tracing costs a loaded server: 8 clients
// reading test://static-text (or, with -tracing.files, a file through the
// files plugin: two host calls) from bin/corral with tracing off and with
// tracing on (sampling 100 %, exporting over OTLP/HTTP to a collector
// that decodes and discards, so that the figure is corral's cost and not
// a collector's on the same cores). Both servers run throughout; the
// pairs (off, on) are interleaved -tracing.rounds times, and the last
// line gives the median and range of each figure and of the ratio of
// each pair, which a machine shared with other work moves far less than
// the figures themselves. The server's CPU per request (from /proc) is
// the figure to read on shared cores; throughput is reported too.
// Every traced request must reach the collector as its spans, and every
// answer must be a result (an error would be cheaper than the work).
//
//	go test -v -run '^$' -bench '^BenchmarkTracing$' -benchtime=3s ./cmd/corral -tracing.rounds=6
func BenchmarkTracing(b *testing.B) {
	var (
		mu    sync.Mutex
		spans = map[string]int64{} // by name
	)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					spans[sp.Name]++
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	root := b.TempDir()
	file := filepath.Join(root, "note.txt")
	if err := os.WriteFile(file, []byte("a note of a few words\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	plugins := fmt.Sprintf("  conformance:\n    grants: {log: true}\n  files:\n    grants: {files: [%s]}\n", root)
	servers := map[string]*wireServer{
		"off": startWire(b, plugins, "conformance", "files"),
		"on": startWire(b, plugins+fmt.Sprintf("trace:\n  exporter: otlp-http\n  endpoint: %s\n  insecure: true\n  sampleRatio: 1\n  serviceName: corral-bench\n",
			strings.TrimPrefix(sink.URL, "http://")), "conformance", "files"),
	}
	uri := "test://static-text"
	perRequest := map[string]int64{"resources/read": 1, "catalog.read": 1, "plugin.call": 1}
	if *tracingFiles {
		uri = "file://" + file
		perRequest["host.file_stat"], perRequest["host.file_read"] = 1, 1
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"` + uri + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	readOnce := func(s *wireServer) error {
		req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "resources/read")
		req.Header.Set("Mcp-Name", uri)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte(`"contents"`))) {
			err = fmt.Errorf("status %d: %s", resp.StatusCode, answer)
		}
		return err
	}
	type figures struct{ cpu, rate float64 }
	var (
		runs   = map[string][]figures{}
		traced int64 // requests sent to the traced server
	)
	const warmup = 500 // so that the first pair does not pay for a cold start
	for range warmup {
		for _, s := range servers {
			if err := readOnce(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	traced += warmup
	for range max(1, *tracingRounds) {
		for _, name := range []string{"off", "on"} {
			s := servers[name]
			var last figures
			b.Run(name, func(b *testing.B) {
				b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // 8 clients
				start, cpu := time.Now(), processCPU(b, s.pid)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := readOnce(s); err != nil {
							b.Error(err)
							return
						}
					}
				})
				last = figures{
					cpu:  float64((processCPU(b, s.pid) - cpu).Microseconds()) / float64(b.N),
					rate: float64(b.N) / time.Since(start).Seconds(),
				}
				b.ReportMetric(last.rate, "req/s")
				b.ReportMetric(last.cpu, "server-cpu-µs/op")
				if name == "on" {
					traced += int64(b.N)
				}
			})
			runs[name] = append(runs[name], last) // the last, full-length run of b.Run
		}
	}
	var cpuRatio, rateRatio []float64
	for i, off := range runs["off"] {
		on := runs["on"][i]
		cpuRatio = append(cpuRatio, on.cpu/off.cpu)
		rateRatio = append(rateRatio, on.rate/off.rate)
	}
	pick := func(mode string, f func(figures) float64) []float64 {
		var out []float64
		for _, r := range runs[mode] {
			out = append(out, f(r))
		}
		return out
	}
	cpuOf, rateOf := func(f figures) float64 { return f.cpu }, func(f figures) float64 { return f.rate }
	b.Logf("%d pairs: server CPU per request off %s µs, on %s µs, on/off %s; req/s off %s, on %s, on/off %s",
		len(cpuRatio), spread(pick("off", cpuOf), "%.0f"), spread(pick("on", cpuOf), "%.0f"), spread(cpuRatio, "%.3f"),
		spread(pick("off", rateOf), "%.0f"), spread(pick("on", rateOf), "%.0f"), spread(rateRatio, "%.3f"))

	// The batcher exports every 5 s or 512 spans: wait for the tail, then
	// check that every traced request's spans arrived, each name once a
	// request (a dropped span is a cost not paid). file_roots is once an
	// instance (the files plugin caches the roots), not counted.
	complete := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for n, k := range perRequest {
			if spans[n] != k*traced {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(8 * time.Second); !complete() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if !complete() {
		mu.Lock()
		defer mu.Unlock()
		b.Errorf("the collector received spans %v for %d traced requests, want %v each", spans, traced, perRequest)
	}
}

// spread is "median (min–max)" of xs in format f.
func spread(xs []float64, f string) string {
	s := slices.Sorted(slices.Values(xs))
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", med, s[0], s[len(s)-1])
}

// processCPU is the CPU time (user and system) process pid has used so
// far, from /proc/PID/stat. Unlike throughput on shared cores, what the
// server spends per request hardly moves with other work on the machine.
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime the 12th and stime the 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		tb.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux
// everywhere corral runs.
const clockTicks = 100
