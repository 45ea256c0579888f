package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// rowFloorInProcess is row 1's in-process limit: the fixture's read
// handler called directly, its result encoded to JSON (what any server
// must at least do), with no protocol and no transport.
func rowFloorInProcess(_ context.Context, o options, t *table) error {
	type contents struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	read := func(uri string) ([]byte, error) {
		return json.Marshal(map[string][]contents{"contents": {{URI: uri, MimeType: "text/plain", Text: docText}}})
	}
	var ns []float64
	for range o.reps {
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := read(docURI); err != nil {
					b.Fatal(err)
				}
			}
		})
		ns = append(ns, float64(r.NsPerOp()))
	}
	t.section("1. The floor", "limit", "measure", "figure")
	m := median(ns)
	t.row("direct Go call (read handler + JSON encoding of its result)", "ns/call (calls/s on one core)",
		fmt.Sprintf("%.0f ns (%.0f/s)", m, 1e9/m))
	t.note("The HTTP floor (a bare `net/http` handler answering the recorded bytes of the same responses) is the first server of row 2, measured in the same runs as the others.")
	return nil
}

// server is one contender of row 2.
type server struct {
	name string
	p    *proc
}

// rowPeers is row 2: every server serves the same fixture; each method ×
// clients × server run is interleaved within a repetition, so the ratios
// compare runs taken minutes apart at most.
func rowPeers(ctx context.Context, o options, t *table) error {
	logs := o.out + "/logs"
	calls := []call{callRead, callPrompt, callComplete, callList}
	probe := func(url string) error {
		var buf bytes.Buffer
		cl := newClient(1)
		defer cl.CloseIdleConnections()
		for _, c := range calls {
			if err := do(ctx, cl, url, c, c.body(), &buf); err != nil {
				return err
			}
		}
		return nil
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.p.stop()
		}
	}()
	add := func(name string, env []string, timeout time.Duration, argv ...string) error {
		p, err := start(ctx, name, filepath.Join(logs, logName(name)), env, timeout, probe, argv...)
		if err != nil {
			return err
		}
		servers = append(servers, &server{name: name, p: p})
		return nil
	}

	// corral, native provider first: its answers are the floor's bytes.
	if err := add("corral-native", nil, 20*time.Second, o.corralBench, "--http", "127.0.0.1:{port}", "--resources", "100"); err != nil {
		return err
	}
	recorded := map[string]string{}
	{
		var buf bytes.Buffer
		cl := newClient(1)
		for _, c := range calls {
			if err := do(ctx, cl, servers[0].p.url, c, c.body(), &buf); err != nil {
				return err
			}
			recorded[c.method] = buf.String()
		}
		cl.CloseIdleConnections()
	}
	floorFile := filepath.Join(o.out, "floor.json")
	b, _ := json.Marshal(recorded)
	if err := os.WriteFile(floorFile, b, 0o644); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("executable: %w", err)
	}
	if err := add("net/http floor", nil, 20*time.Second, self, "serve-floor", "127.0.0.1:{port}", floorFile); err != nil {
		return err
	}
	if err := add("go-sdk v1.8.0", nil, 20*time.Second, self, "serve-gosdk", "127.0.0.1:{port}", "100"); err != nil {
		return err
	}
	if err := add("ts-sdk 2.4.0", nil, 30*time.Second, o.node, o.nodeServer, "{port}", "100"); err != nil {
		return err
	}
	dir := filepath.Join(o.out, "row2-plugins")
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	if err := copyPlugin(o.fixture, dir, "bfx000:0100", "bfx000:0100", time.Now().Add(-time.Hour)); err != nil {
		return err
	}
	// corral limits completion/complete per principal by default (20/s);
	// the peers have no such limit, so the comparison turns it off.
	if err := add("corral wasm", []string{"CORRAL_AUTH_COMPLETION_RATE=0"}, 60*time.Second, o.corral, "serve", "--plugins", dir, "--http", "127.0.0.1:{port}", "--log-level", "warn"); err != nil {
		return err
	}
	// Reorder: floor, peers, then corral.
	order := []string{"net/http floor", "go-sdk v1.8.0", "ts-sdk 2.4.0", "corral-native", "corral wasm"}
	byName := map[string]*server{}
	for _, s := range servers {
		byName[s.name] = s
	}

	type key struct {
		server, method string
		clients        int
	}
	res := map[key][]loadResult{}
	for rep := range o.reps {
		for _, c := range calls {
			for _, n := range o.conc {
				for _, name := range order {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					r := load(ctx, byName[name].p.url, []call{c}, n, o.warm, o.dur)
					res[key{name, c.method, n}] = append(res[key{name, c.method, n}], r)
					if r.errs > 0 {
						fmt.Fprintf(os.Stderr, "bench: %s %s x%d rep %d: %d errors, first: %v\n", name, c.method, n, rep, r.errs, r.firstErr)
					}
				}
			}
		}
	}
	summary := func(rs []loadResult) (rps float64, p50, p99 time.Duration, errs int) {
		var a []float64
		var b, c []time.Duration
		for _, r := range rs {
			a, b, c = append(a, r.rps), append(b, r.p50), append(c, r.p99)
			errs += r.errs
		}
		return median(a), median(b), median(c), errs
	}
	t.section("2. Peers serving the same fixture (Streamable HTTP, 2026-07-28 wire)",
		"method", "clients", "server", "req/s", "p50", "p99", "errors")
	for _, c := range calls {
		for _, n := range o.conc {
			for _, name := range order {
				rps, p50, p99, errs := summary(res[key{name, c.method, n}])
				t.row("`"+c.method+"`", fmt.Sprint(n), name, fmtRPS(rps), fmtDur(p50), fmtDur(p99), fmt.Sprint(errs))
			}
		}
	}
	t.section("2. Ratios (same runs)", "method", "clients",
		"corral wasm ÷ go-sdk req/s (target ≥ 1.0 at 8, 64)", "corral wasm ÷ go-sdk p99 (target ≤ 1.0)",
		"floor ÷ corral-native req/s (target ≤ 1.25)", "corral-native ÷ go-sdk req/s", "corral wasm ÷ ts-sdk req/s",
		"corral wasm ÷ corral-native req/s (same fixture logic)")
	for _, c := range calls {
		for _, n := range o.conc {
			w, _, wp99, _ := summary(res[key{"corral wasm", c.method, n}])
			g, _, gp99, _ := summary(res[key{"go-sdk v1.8.0", c.method, n}])
			f, _, _, _ := summary(res[key{"net/http floor", c.method, n}])
			nat, _, _, _ := summary(res[key{"corral-native", c.method, n}])
			ts, _, _, _ := summary(res[key{"ts-sdk 2.4.0", c.method, n}])
			t.row("`"+c.method+"`", fmt.Sprint(n), fmtRatio(w/g), fmtRatio(float64(wp99)/float64(gp99)),
				fmtRatio(f/nat), fmtRatio(nat/g), fmtRatio(w/ts), fmtRatio(w/nat))
		}
	}
	return nil
}

// copyPlugin writes the fixture to dir as NAME.wasm with its spec string
// from replaced by to (same length), dated mtime so that the registry
// does not wait for the file to settle.
func copyPlugin(src, dir, from, to string, mtime time.Time) error {
	if len(from) != len(to) {
		return fmt.Errorf("plugin spec %q and %q differ in length", from, to)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	if n := bytes.Count(b, []byte(from)); n != 1 {
		return fmt.Errorf("plugin %s holds %q %d times, want once", src, from, n)
	}
	b = bytes.Replace(b, []byte(from), []byte(to), 1)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	name, _, _ := bytes.Cut([]byte(to), []byte(":"))
	path := filepath.Join(dir, string(name)+".wasm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	return os.Chtimes(path, mtime, mtime)
}

// logName turns a server name into a log file name.
func logName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b) + ".log"
}
