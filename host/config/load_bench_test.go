package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkLoadEntries is config.Load of a file with an entry per plugin
// ("entries"), per entry: flat when loading grows with the entries, not
// their square. "fleet" sets the same limit for every plugin with one
// plugins.limits key instead, reported per plugin of a fleet of 4,000.
//
//	go test -run '^$' -bench LoadEntries ./host/config
func BenchmarkLoadEntries(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
		body func(n int) string
	}{
		{"entries/500", 500, entriesBody},
		{"entries/4000", 4000, entriesBody},
		{"fleet/4000", 4000, func(int) string { return "plugins:\n  limits:\n    sleepAfter: 1s\n" }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "corral.yaml")
			if err := os.WriteFile(file, []byte(bc.body(bc.n)), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				cfg, err := Load(Source{File: file, Environ: []string{}})
				if err != nil {
					b.Fatal(err)
				}
				if got := cfg.PluginSettings("p00007").Limits.SleepAfter; got != time.Second {
					b.Fatalf("sleepAfter %v, want 1s", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.n), "ns/plugin")
		})
	}
}

func entriesBody(n int) string {
	var sb strings.Builder
	sb.WriteString("plugin:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  p%05d:\n    limits:\n      sleepAfter: 1s\n", i)
	}
	return sb.String()
}
