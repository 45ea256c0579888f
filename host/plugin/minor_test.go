package plugin

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestGuestsReportABIMinor: the guests corral ships and tests with (the Go
// SDK's and the C, Rust and AssemblyScript SDKs' examples, through the real
// marker call, and every hand-written WAT fixture) report abi.Minor from
// corral_abi_v1, the minor ABI.md describes (§2, §3.1, §15), so the host,
// the document, every SDK and the fixtures agree.
func TestGuestsReportABIMinor(t *testing.T) {
	marker := regexp.MustCompile(`\(func \(export "corral_abi_v1"\) \(result i32\) \(i32\.const (-?\d+)\)\)`)
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "wat", "*.wat"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WAT fixtures: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(src, []byte(`"corral_abi_v1"`)) {
			continue // a fixture without the marker, on purpose
		}
		m := marker.FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: corral_abi_v1 is not a constant the test can read", filepath.Base(f))
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != abi.Minor {
			t.Errorf("%s: corral_abi_v1 returns %d, want %d (abi.Minor)", filepath.Base(f), n, abi.Minor)
		}
	}
	// The bundled Go guests (the Go SDK's), and the example provider of
	// the C, Rust and AssemblyScript SDKs (make examples builds them).
	for _, name := range []string{"conformance", "files", "issues", "examples/c", "examples/rust", "examples/assemblyscript"} {
		t.Run(name, func(t *testing.T) {
			var wasm []byte
			if example, ok := strings.CutPrefix(name, "examples/"); ok {
				b, err := os.ReadFile(filepath.Join("..", "..", "build", "examples", example+".wasm"))
				if errors.Is(err, os.ErrNotExist) {
					t.Skipf("build/examples/%s.wasm is missing; run make examples", example)
				}
				if err != nil {
					t.Fatal(err)
				}
				wasm = b
			} else {
				wasm = builtGuest(t, name)
			}
			e := newEnv(t, RuntimeConfig{CacheDir: filepath.Join(os.TempDir(), "corral-plugin-test-cache")})
			ctx := context.Background()
			mod, err := e.rt.Compile(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close(ctx)
			p, err := e.rt.Load(ctx, mod, Config{Source: filepath.Base(name) + ".wasm", PoolSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			in, err := p.create(ctx, p.cm)
			if err != nil {
				t.Fatal(err)
			}
			defer in.close(ctx)
			if got, err := in.marker(ctx); err != nil || got != abi.Minor {
				t.Errorf("corral_abi_v1() = %d, %v; want %d (abi.Minor)", got, err, abi.Minor)
			}
		})
	}
}
