package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoadEntries is config.Load of a file with an entry per plugin,
// per entry: flat when loading grows with the entries, not their square.
//
//	go test -run '^$' -bench LoadEntries ./host/config
func BenchmarkLoadEntries(b *testing.B) {
	for _, n := range []int{500, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString("plugin:\n")
			for i := range n {
				fmt.Fprintf(&sb, "  p%05d:\n    limits:\n      sleepAfter: 1s\n", i)
			}
			file := filepath.Join(b.TempDir(), "corral.yaml")
			if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				cfg, err := Load(Source{File: file})
				if err != nil {
					b.Fatal(err)
				}
				if len(cfg.Plugin) != n {
					b.Fatalf("%d entries, want %d", len(cfg.Plugin), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}
