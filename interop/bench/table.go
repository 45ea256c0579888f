package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// table accumulates the Markdown report.
type table struct {
	o     options
	b     strings.Builder
	start time.Time
}

func newTable(o options) *table {
	t := &table{o: o, start: time.Now()}
	fmt.Fprintf(&t.b, "## Results\n\n")
	fmt.Fprintf(&t.b, "`%s` (interop/bench, %s, %d cores, %s; each load run %s after %s warm-up, %d repetitions, medians; clients %v)\n\n",
		o.title, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), o.dur, o.warm, o.reps, o.conc)
	return t
}

// section starts a table with a heading and column names.
func (t *table) section(title string, cols ...string) {
	fmt.Fprintf(&t.b, "\n### %s\n\n| %s |\n|%s\n", title, strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)))
}

// row adds one row to the current table.
func (t *table) row(cells ...string) {
	fmt.Fprintf(&t.b, "| %s |\n", strings.Join(cells, " | "))
	fmt.Fprintf(os.Stderr, "  %s\n", strings.Join(cells, "  "))
}

// note adds a paragraph after the current table.
func (t *table) note(text string) { fmt.Fprintf(&t.b, "\n%s\n", text) }

func (t *table) write() error {
	fmt.Fprintf(&t.b, "\nTotal time: %s.\n", time.Since(t.start).Round(time.Second))
	fmt.Print(t.b.String())
	if err := os.WriteFile(t.o.out+"/table.md", []byte(t.b.String()), 0o644); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

// Formatting helpers.
func fmtRPS(v float64) string { return fmt.Sprintf("%.0f", v) }

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }

func fmtMiB(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func nsDur(ns float64) time.Duration { return time.Duration(ns) }
