package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// goBench runs `go test -run ^$ -bench pattern -count count pkg` in dir and
// returns every benchmark's ns/op values by name (the -N GOMAXPROCS suffix
// removed), and the values of its other metrics by name, a space and the
// unit ("BenchmarkHidden/read hidden/missing"). The raw output is saved to
// logs/NAME.txt.
func goBench(ctx context.Context, o options, name, dir, pkg, pattern string, count int, extra ...string) (map[string][]float64, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", strconv.Itoa(count)}, extra...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	_ = os.WriteFile(filepath.Join(o.out, "logs", name+".txt"), out.Bytes(), 0o644)
	if err != nil {
		return nil, fmt.Errorf("go %s (in %s): %w: %.400s", strings.Join(args, " "), dir, err, out.String())
	}
	res := map[string][]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		bench := f[0]
		if i := strings.LastIndex(bench, "-"); i > 0 {
			bench = bench[:i]
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			key := bench
			if f[i+1] != "ns/op" {
				key += " " + f[i+1]
			}
			res[key] = append(res[key], v)
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("go %s: no benchmark results (skipped? see logs/%s.txt)", strings.Join(args, " "), name)
	}
	return res, nil
}

// rootBenches runs, once per harness run, the root module's benchmarks
// rows 3 and 4 read: host/plugin's Overhead, PoolScaling and FixtureCall,
// -count=reps in one go test invocation (one build, one process).
var rootBenches = struct {
	once sync.Once
	res  map[string][]float64
	err  error
}{}

func rootBench(ctx context.Context, o options) (map[string][]float64, error) {
	rootBenches.once.Do(func() {
		rootBenches.res, rootBenches.err = goBench(ctx, o, "host-plugin", o.root, "./host/plugin",
			"^(BenchmarkOverhead|BenchmarkPoolScaling|BenchmarkFixtureCall)$", o.reps, "-benchtime", "4000x")
	})
	return rootBenches.res, rootBenches.err
}

// rowOverhead is row 3: one call of the same echo guest through corral's
// ABI (host/plugin BenchmarkOverhead) and through Extism's Go SDK v1.7.1
// (interop/bench BenchmarkOverhead).
func rowOverhead(ctx context.Context, o options, t *table) error {
	r, err := rootBench(ctx, o)
	if err != nil {
		return err
	}
	e, err := goBench(ctx, o, "extism", filepath.Join(o.root, "interop"), "./bench", "^BenchmarkOverhead$", o.reps, "-benchtime", "4000x")
	if err != nil {
		return err
	}
	c, ex, en := median(r["BenchmarkOverhead"]), median(e["BenchmarkOverhead/timeout"]), median(e["BenchmarkOverhead/no-timeout"])
	t.section("3. Plugin call overhead (1 KiB echo, one warm instance)", "host", "per call", "corral ÷ this (target ≤ 0.5)")
	t.row("corral ABI (`host/plugin` BenchmarkOverhead, 5 s call deadline)", fmtDur(nsDur(c)), "1.00×")
	t.row("Extism go-sdk v1.7.1 + go-pdk v1.1.3, 5 s timeout", fmtDur(nsDur(ex)), fmtRatio(c/ex))
	t.row("Extism go-sdk v1.7.1 + go-pdk v1.1.3, no timeout", fmtDur(nsDur(en)), fmtRatio(c/en))
	t.note("Both guests are Go (`GOOS=wasip1`, `-buildmode=c-shared`, `//go:wasmexport`) and answer their input unchanged: " +
		"`host/plugin/testdata/echoguest` on corral's raw ABI, `interop/bench/extismguest` on Extism's PDK. " +
		"With a timeout Extism runs wazero with `WithCloseOnContextDone` (an exit to Go on every loop iteration); " +
		"corral always has a deadline and stops a guest with the interrupt flag its rewrite compiles into the module (docs/engines.md).")
	return nil
}

// rowPool is row 4: one plugin, 8 concurrent callers, a pool of 1 vs 2
// instances (host/plugin BenchmarkPoolScaling), with the single-caller
// cost of each fixture operation (BenchmarkFixtureCall) for reference.
func rowPool(ctx context.Context, o options, t *table) error {
	r, err := rootBench(ctx, o)
	if err != nil {
		return err
	}
	a, b := median(r["BenchmarkPoolScaling/instances=1"]), median(r["BenchmarkPoolScaling/instances=2"])
	t.section("4. Concurrency on one plugin (8 callers, 2 cores, fixture plugin reading 1 KiB)",
		"instances", "calls/s", "per call", "speed-up (target ≥ 1.8)")
	t.row("1 (one guarded instance)", fmt.Sprintf("%.0f", 1e9/a), fmtDur(nsDur(a)), "1.00×")
	t.row("2", fmt.Sprintf("%.0f", 1e9/b), fmtDur(nsDur(b)), fmtRatio(a/b))
	t.note(fmt.Sprintf("One call at a time on a warm instance (BenchmarkFixtureCall): read %s, prompts/get %s, completion %s.",
		fmtDur(nsDur(median(r["BenchmarkFixtureCall/read"]))), fmtDur(nsDur(median(r["BenchmarkFixtureCall/prompt"]))),
		fmtDur(nsDur(median(r["BenchmarkFixtureCall/complete"])))))
	return nil
}

// rowHidden is row 8: anything hidden answers like something missing, in
// time as in bytes (issue 13 item 5). cmd/corral-bench BenchmarkHidden
// serves, through the in-process stack with a policy, a request for
// something hidden from the caller and the same request for something
// missing, alternately in one loop, and reports the median of each.
func rowHidden(ctx context.Context, o options, t *table) error {
	r, err := goBench(ctx, o, "hidden", o.root, "./cmd/corral-bench", "^BenchmarkHidden$", o.reps, "-benchtime", "10000x")
	if err != nil {
		return err
	}
	t.section("8. Hidden answers like missing, in time (in-process stack, a policy; medians)",
		"probe", "missing", "hidden", "hidden ÷ missing (target ≈ control)")
	for _, p := range []struct{ name, label string }{
		{"read", "`resources/read`: a scheme of a hidden plugin (4 templates) vs an unserved scheme"},
		{"prompt", "`prompts/get`: a hidden prompt vs an unknown one"},
		{"tool", "`tools/call`: a hidden tool vs an unknown one"},
		{"complete", "`completion/complete`: a hidden template vs an unknown one"},
		{"control", "control: two unknown prompts"},
	} {
		k := "BenchmarkHidden/" + p.name
		t.row(p.label, fmt.Sprintf("%.2f µs", median(r[k+" missing-ns/op"])/1e3), fmt.Sprintf("%.2f µs", median(r[k+" hidden-ns/op"])/1e3),
			fmt.Sprintf("%.3f×", median(r[k+" hidden/missing"])))
	}
	t.note("Each benchmark iteration serves one hidden and one missing request in alternating order and times only `ServeHTTP`; " +
		"the control pair measures the method's own error. Both answers are the same bytes (`cmd/corral: TestHiddenAnswersAsMissing`).")
	return nil
}
