package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/plugin"
)

// TestConfigCheck runs `corral config check` as a person would: every
// problem of the file at once with a count, then (unless --portable) what
// the file needs of this machine and binary, wasmtime on a binary built
// without it among them.
func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", "log:\n  level: loud\nplugins:\n  dirr: x\nplugin:\n  f:\n    limits:\n      timeout: soon\n")
	machine := write("machine.yaml", "plugins:\n  dir: nowhere\n  engine: wasmtime\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr []string // each a whole line, in order
	}{
		{"every file problem", []string{"config", "check", bad}, exitFail, "", []string{
			bad + `:2: log.level: want debug, info, warn or error, got "loud"`,
			bad + `:4: plugins.dirr: unknown key (did you mean "plugins.dir"?)`,
			bad + `:8: plugin.f.limits.timeout: "soon" is not a duration: write a number with a unit, e.g. 500ms, 30s, 2m or 1h`,
			"3 problems",
		}},
		{"machine and binary", []string{"config", "check", machine}, exitFail, "", []string{
			machine + ":2: plugins.dir: " + filepath.Join(dir, "nowhere") + " does not exist: create it (mkdir -p " + filepath.Join(dir, "nowhere") + ") or point plugins.dir at the folder of .wasm files",
			machine + `:3: plugins.engine: plugin: engine "wasmtime" is not in this build of corral (built with engines [wazero]); build with -tags wasmtime (make build-wasmtime)`,
			"2 problems with this machine or binary (--portable skips these checks)",
		}},
		{"portable skips them", []string{"config", "check", "--portable", machine}, exitOK, machine + ": ok (0 plugin entries)\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "machine and binary" && plugin.CheckEngine(plugin.EngineWasmtime) == nil {
				t.Skip("this binary has wasmtime")
			}
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || stdout != tt.stdout {
				t.Errorf("exit %d, stdout %q; want %d, %q", code, stdout, tt.code, tt.stdout)
			}
			want := strings.Join(tt.stderr, "\n")
			if want != "" {
				want += "\n"
			}
			if stderr != want {
				t.Errorf("stderr\n%s\nwant\n%s", stderr, want)
			}
		})
	}
}
