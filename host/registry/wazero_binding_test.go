package registry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// watFixture reads testdata/wat/<name>.wasm (bash testdata/build.sh).
func watFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(buildDir, "..", "testdata", "wat", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBindingWasm drives the hand-written hijacker and impostor through the
// real registry and wazero next to the bundled plugins they attack.
func TestBindingWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Wasm plugins")
	}
	conf, issues := builtPlugin(t, "conformance"), builtPlugin(t, "issues")
	hijack, impostor := watFixture(t, "hijack"), watFixture(t, "impostor")
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	sample := filepath.Join(buildDir, "..", "testdata", "sample", "issues")
	issuesCfg := func(b config.Binding) *config.Config {
		p := config.DefaultPlugin()
		p.Binding = b
		p.Grants.Files = []string{sample}
		p.Grants.Config = map[string]string{"data": "issues.json"}
		c := config.DefaultPlugin()
		c.SHA256 = digestOf(conf)
		return &config.Config{Plugin: map[string]config.Plugin{"issues": p, "conformance": c}}
	}

	for _, rival := range []string{"aaa.wasm", "zzz.wasm"} {
		t.Run("hijacker "+rival+" at start", func(t *testing.T) {
			dir := t.TempDir()
			writeOld(t, dir, map[string][]byte{"conformance.wasm": conf, rival: hijack})
			r := start(t, dir, WasmLoader(rt), issuesCfg(config.Binding{}), nil)
			f := settledState(t, r, rival, 30*time.Second)
			if s, err := read(r.Catalog(), "test://static-text"); err != nil || s != catalogtest.StaticText {
				t.Errorf("test://static-text = %q, %v; want conformance's", s, err)
			}
			if f.State != StateRefused || f.Conflict == nil || f.Conflict.Value != "test" {
				t.Errorf("%s: %+v, want refused over scheme test", rival, f)
			}
		})
	}
	t.Run("hijacker hot-added", func(t *testing.T) {
		dir := t.TempDir()
		writeOld(t, dir, map[string][]byte{"conformance.wasm": conf})
		r := start(t, dir, WasmLoader(rt), issuesCfg(config.Binding{}), nil)
		writeRaw(t, dir, "aaa.wasm", hijack)
		within(t, 30e9, "hijacker refused", func() bool { return fileState(r, "aaa.wasm").State == StateRefused })
		if s, err := read(r.Catalog(), "test://static-text"); err != nil || s != catalogtest.StaticText {
			t.Errorf("test://static-text = %q, %v; want conformance's", s, err)
		}
	})
	for _, tc := range []struct {
		name    string
		bind    func(dir string) config.Binding
		serving bool // whether the real issues plugin serves
	}{
		{"impostor of issues bound by file", func(dir string) config.Binding {
			return config.Binding{File: filepath.Join(dir, "issues.wasm")}
		}, true},
		{"impostor of issues bound by digest", func(string) config.Binding { return config.Binding{SHA256: digestOf(issues)} }, true},
		{"impostor of unbound issues", func(string) config.Binding { return config.Binding{} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeOld(t, dir, map[string][]byte{"issues.wasm": issues, "aaa.wasm": impostor})
			loader := &recordingLoader{Loader: WasmLoader(rt)}
			r := start(t, dir, loader, issuesCfg(tc.bind(dir)), nil)
			f := settledState(t, r, "aaa.wasm", 30*time.Second)
			settledState(t, r, "issues.wasm", 30*time.Second)
			if s, err := read(r.Catalog(), "issues://stolen"); err == nil {
				t.Errorf("the impostor serves: %q", s)
			}
			s, err := read(r.Catalog(), "issues://1")
			if got := err == nil && !strings.Contains(s, "IMPOSTOR"); got != tc.serving {
				t.Errorf("issues://1 = %.60q, %v; want served %v", s, err, tc.serving)
			}
			if f.State != StateRefused {
				t.Errorf("impostor %+v, want refused", f)
			}
			if n := loader.started("aaa.wasm"); len(n) != 0 {
				t.Errorf("the impostor was instantiated with %+v; want never", n)
			}
			// Hot: a second impostor gets the same treatment.
			writeRaw(t, dir, "aab.wasm", impostor)
			within(t, 30e9, "second impostor refused", func() bool { return fileState(r, "aab.wasm").State == StateRefused })
			if n := loader.started("aab.wasm"); len(n) != 0 {
				t.Errorf("the hot-added impostor was instantiated with %+v; want never", n)
			}
		})
	}
}
