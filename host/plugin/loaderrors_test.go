package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// goCommand builds testdata/loaderrors/gocommand the way an author who
// forgets -buildmode=c-shared would, once per test binary.
var goCommand = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "corral-gocommand")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "gocommand.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = filepath.Join("..", "..", "testdata", "loaderrors", "gocommand")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, &exec.Error{Name: "go build: " + strings.TrimSpace(string(msg)), Err: err}
	}
	return os.ReadFile(out)
})

// TestAuthorLoadErrors loads modules built the wrong way with the real
// toolchains (testdata/loaderrors/build.sh says how each was made) and
// checks that each is refused with a one-line cause and the fix, in words
// that name no engine's internals.
func TestAuthorLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string // nil: loads
	}{
		{"c-reactor.wasm", nil},
		{"go-command", []string{"WASI command (it exports _start)", "-buildmode=c-shared", "-mexec-model=reactor"}},
		{"c-command.wasm", []string{"WASI command (it exports _start)", "-mexec-model=reactor"}},
		{"c-nomarker.wasm", []string{"missing export corral_abi_v1 () -> (i32)", "version marker"}},
		{"rust-describe.wasm", []string{"describe: bad_output: answered an error instead of its manifest, code internal",
			`resource "docs://index" is outside the plugin's schemes`, "must answer the manifest"}},
		{"../wat/starttrap.wasm", []string{"instantiate: _initialize:", "unreachable"}},
		{"c-describe-trap.wasm", []string{"describe: trap:", "unreachable", "a guest that traps there never loads"}},
		{"as-abort.wasm", []string{"imports env.abort: AssemblyScript", "asc --use abort="}},
		{"library.wasm", []string{"exports none of corral_abi_v1, corral_buffer and corral_call: it is not a corral plugin", "docs/plugins.md"}},
		{"wbindgen.wasm", []string{"built with wasm-bindgen for a JavaScript host (it imports __wbindgen_placeholder__.__wbindgen_describe)", "wasm32-wasi"}},
		{"env.wasm", []string{`imports env.host_log from module "env"`, "build it for wasm32-wasi", "--target=wasm32-wasi"}},
		{"component.wasm", []string{"a WebAssembly component, not a core module", "wasm32-wasi (not wasm32-wasip2)"}},
		{"native.elf", []string{"native ELF executable, not WebAssembly", "GOOS=wasip1 GOARCH=wasm"}},
		{"text.wasm", []string{"WebAssembly text (.wat)", "wat2wasm"}},
		{"truncated.wasm", []string{"truncated or corrupt", "at 250 bytes", "copy it again in full"}},
		{"empty", []string{"the file is empty"}},
		{"garbage", []string{"not WebAssembly (it starts with 68 65 6c 6c 6f", "not 00 61 73 6d"}},
		{"short-header", []string{"truncated: 5 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var wasm []byte
			var err error
			switch tt.file {
			case "go-command":
				wasm, err = goCommand()
			case "empty":
			case "garbage":
				wasm = []byte("hello, not a plugin\n")
			case "short-header":
				wasm = []byte("\x00asm\x01")
			default:
				wasm, err = os.ReadFile(filepath.Join("..", "..", "testdata", "loaderrors", tt.file))
			}
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, RuntimeConfig{})
			ctx := context.Background()
			m, err := e.rt.Compile(ctx, wasm)
			if err == nil {
				var p *Plugin
				p, err = e.rt.Load(ctx, m, Config{Source: tt.file, PoolSize: 1})
				if err == nil {
					p.Close(ctx)
				}
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("loaded, want a refusal")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			for _, internal := range []string{"\n", "interrupt", "wazero", "wasmtime", "module[", "compile: compile:", "instantiate: instantiate:"} {
				if strings.Contains(msg, internal) {
					t.Errorf("error %q contains %q", msg, internal)
				}
			}
		})
	}
}
