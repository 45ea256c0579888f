package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTracing measures what tracing costs a loaded server: 8 clients
// reading test://static-text from bin/corral with tracing off and with
// tracing on (sampling 100 %, exporting over OTLP/HTTP to a collector
// that accepts and discards, so that the figure is corral's cost and not
// a collector's on the same cores). Run it with -count to interleave the
// two (off, on, off, on, …) and read the spread:
//
//	go test -run '^$' -bench '^BenchmarkTracing$' -count=5 -benchtime=3s ./cmd/corral
func BenchmarkTracing(b *testing.B) {
	var exported atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		exported.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	servers := map[string]*wireServer{
		"off": startWire(b, "  conformance:\n    grants: {log: true}\n", "conformance"),
		"on": startWire(b, fmt.Sprintf("  conformance:\n    grants: {log: true}\ntrace:\n  exporter: otlp-http\n  endpoint: %s\n  insecure: true\n  sampleRatio: 1\n  serviceName: corral-bench\n",
			strings.TrimPrefix(sink.URL, "http://")), "conformance"),
	}
	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, name := range []string{"off", "on"} {
		s := servers[name]
		b.Run(name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // 8 clients
			start, cpu := time.Now(), processCPU(b, s.pid)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(read))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("MCP-Protocol-Version", "2026-07-28")
					req.Header.Set("Mcp-Method", "resources/read")
					req.Header.Set("Mcp-Name", "test://static-text")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			b.ReportMetric(float64((processCPU(b, s.pid)-cpu).Microseconds())/float64(b.N), "server-cpu-µs/op")
		})
	}
	if exported.Load() == 0 && b.N > 1 {
		// The batcher exports every 5 s: a short run may end first.
		b.Log("no span exported yet to the sink")
	}
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
