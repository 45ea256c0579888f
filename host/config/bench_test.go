package config

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad is the cost of loading and validating a small YAML file
// with three plugin entries (a reload).
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	os.Mkdir(filepath.Join(dir, "docs"), 0o755)
	file := filepath.Join(dir, "corral.yaml")
	os.WriteFile(file, []byte(`
http: {addr: 127.0.0.1:7337}
log: {level: info}
plugins: {dir: plugins}
plugin:
  files: {grants: {files: [docs], log: true}}
  issues: {grants: {files: [docs], config: {data: issues.json}}}
  conformance: {grants: {log: true, notify: true}, limits: {timeout: 2s}}
`), 0o644)
	src := Source{File: file, Environ: []string{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(src); err != nil {
			b.Fatal(err)
		}
	}
}
