package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
)

// BenchmarkScanUnchanged is the cost of a safety-net rescan of a directory
// of 20 plugins when nothing changed.
func BenchmarkScanUnchanged(b *testing.B) {
	dir := b.TempDir()
	old := time.Now().Add(-time.Minute)
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		writeSpecB(b, dir, name+".wasm", spec{Name: name, Scheme: name, Text: "x"})
		os.Chtimes(filepath.Join(dir, name+".wasm"), old, old)
	}
	r, err := New(Options{Dir: dir, Loader: &nativeLoader{}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	ctx := context.Background()
	if _, err := r.Scan(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Scan(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSwapOne is the cost of replacing one plugin among 20: read,
// compile (native), build a new Set and swap it in.
func BenchmarkSwapOne(b *testing.B) {
	dir := b.TempDir()
	old := time.Now().Add(-time.Minute)
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		writeSpecB(b, dir, name+".wasm", spec{Name: name, Scheme: name, Text: "x"})
		os.Chtimes(filepath.Join(dir, name+".wasm"), old, old)
	}
	r, err := New(Options{Dir: dir, Loader: &nativeLoader{}, DrainGrace: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	ctx := context.Background()
	r.Scan(ctx)
	path := filepath.Join(dir, "p00.wasm")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		writeSpecB(b, dir, "p00.wasm", spec{Name: "p00", Scheme: "p00", Text: fmt.Sprint(i)})
		t := old.Add(time.Duration(i) * time.Second)
		os.Chtimes(path, t, t)
		if _, err := r.Scan(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func writeSpecB(b *testing.B, dir, file string, s spec) {
	b.Helper()
	data := fmt.Sprintf(`{"name":%q,"scheme":%q,"text":%q}`, s.Name, s.Scheme, s.Text)
	if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSettle measures the settlement every scan runs: 200 plugins of
// six claims each, one pair conflicting, half of them bound.
func BenchmarkSettle(b *testing.B) {
	cfg := &config.Config{Plugin: map[string]config.Plugin{}}
	var cands []Candidate
	for i := range 200 {
		name := fmt.Sprintf("p%03d", i)
		m := &abi.Manifest{Name: name, ABI: abi.Major, Schemes: []string{name},
			Prompts: []abi.Prompt{{Name: name + "-p"}}, Tools: []abi.Tool{{Name: name + "-t"}, {Name: name + "-u"}},
			Templates: []abi.Template{{URITemplate: name + "://{x}"}}}
		if i == 199 {
			m.Schemes = []string{"p000"}
		}
		path := "/plugins/" + name + ".wasm"
		if i%2 == 0 {
			s := config.DefaultPlugin()
			s.File = path
			cfg.Plugin[name] = s
		}
		cands = append(cands, Candidate{Path: path, Digest: name, Manifest: m})
	}
	b.ReportAllocs()
	for b.Loop() {
		if refused := Settle(cfg, cands); len(refused) != 1 {
			b.Fatalf("%d refused, want 1", len(refused))
		}
	}
}
