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
)

// goBench runs `go test -run ^$ -bench pattern -count count pkg` in dir and
// returns every benchmark's ns/op values by name (the -N GOMAXPROCS suffix
// removed). The raw output is saved to logs/NAME.txt.
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
		for i := 2; i+1 < len(f); i++ {
			if f[i+1] == "ns/op" {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					res[bench] = append(res[bench], v)
				}
			}
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("go %s: no benchmark results (skipped? see logs/%s.txt)", strings.Join(args, " "), name)
	}
	return res, nil
}

// rowOverhead is row 3: one call of the same echo guest through corral's
// ABI (host/plugin BenchmarkOverhead) and through Extism's Go SDK v1.7.1
// (interop/bench BenchmarkOverhead), alternating the two so both see the
// same machine.
func rowOverhead(ctx context.Context, o options, t *table) error {
	var corral, extism, extismNoTimeout []float64
	for range o.reps {
		c, err := goBench(ctx, o, "overhead-corral", o.root, "./host/plugin", "^BenchmarkOverhead$", 1)
		if err != nil {
			return err
		}
		e, err := goBench(ctx, o, "overhead-extism", filepath.Join(o.root, "interop"), "./bench", "^BenchmarkOverhead$", 1)
		if err != nil {
			return err
		}
		corral = append(corral, c["BenchmarkOverhead"]...)
		extism = append(extism, e["BenchmarkOverhead/timeout"]...)
		extismNoTimeout = append(extismNoTimeout, e["BenchmarkOverhead/no-timeout"]...)
	}
	c, e, en := median(corral), median(extism), median(extismNoTimeout)
	t.section("3. Plugin call overhead (1 KiB echo, one warm instance)", "host", "per call", "corral ÷ this (target ≤ 0.5)")
	t.row("corral ABI (`host/plugin` BenchmarkOverhead, 5 s call deadline)", fmtDur(nsDur(c)), "1.00×")
	t.row("Extism go-sdk v1.7.1 + go-pdk v1.1.3, 5 s timeout", fmtDur(nsDur(e)), fmtRatio(c/e))
	t.row("Extism go-sdk v1.7.1 + go-pdk v1.1.3, no timeout", fmtDur(nsDur(en)), fmtRatio(c/en))
	t.note("Both guests are Go (`GOOS=wasip1`, `-buildmode=c-shared`, `//go:wasmexport`) and answer their input unchanged: " +
		"`host/plugin/testdata/echoguest` on corral's raw ABI, `interop/bench/extismguest` on Extism's PDK. " +
		"With a timeout both hosts run wazero with `WithCloseOnContextDone`.")
	return nil
}

// rowPool is row 4: one plugin, 8 concurrent callers, a pool of 1 vs 2
// instances (host/plugin BenchmarkPoolScaling).
func rowPool(ctx context.Context, o options, t *table) error {
	var one, two []float64
	for range o.reps {
		r, err := goBench(ctx, o, "pool", o.root, "./host/plugin", "^BenchmarkPoolScaling$", 1)
		if err != nil {
			return err
		}
		one = append(one, r["BenchmarkPoolScaling/instances=1"]...)
		two = append(two, r["BenchmarkPoolScaling/instances=2"]...)
	}
	a, b := median(one), median(two)
	t.section("4. Concurrency on one plugin (8 callers, 2 cores, fixture plugin reading 1 KiB)",
		"instances", "calls/s", "per call", "speed-up (target ≥ 1.8)")
	t.row("1 (one guarded instance)", fmt.Sprintf("%.0f", 1e9/a), fmtDur(nsDur(a)), "1.00×")
	t.row("2", fmt.Sprintf("%.0f", 1e9/b), fmtDur(nsDur(b)), fmtRatio(a/b))
	return nil
}
