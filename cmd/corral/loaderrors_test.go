package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginCheckExplains runs `corral plugin check` on modules built the
// wrong way (testdata/loaderrors/build.sh) and checks that it fails with
// one line naming the file (once), the cause and the fix.
func TestPluginCheckExplains(t *testing.T) {
	tests := []struct{ file, want string }{
		{"c-describe-trap.wasm", "c-describe-trap.wasm: instantiate: describe: trap: wasm error: unreachable"},
		{"c-command.wasm", "the module is a WASI command (it exports _start), and corral loads reactors: rebuild it as a reactor: Go -buildmode=c-shared, C -mexec-model=reactor, Rust a cdylib crate"},
		{"c-nomarker.wasm", "missing export corral_abi_v1 () -> (i32), the version marker every guest exports"},
		{"rust-describe.wasm", `answered an error instead of its manifest, code internal: corral: plugin "misdeclared": resource "docs://index" is outside the plugin's schemes ["notes"] (describe runs once at load, with no capabilities, and must answer the manifest)`},
		{"env.wasm", `the module imports env.host_log from module "env"`},
		{"component.wasm", "the file is a WebAssembly component, not a core module"},
		{"truncated.wasm", "the file is truncated or corrupt: it ends, at 250 bytes, inside what it declares"},
		{"text.wasm", "the file is WebAssembly text (.wat), not a binary module: convert it with wat2wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(repoRoot, "testdata", "loaderrors", tt.file)
			code, out, errs := runCLI(t, "", "plugin", "check", path)
			if code != exitFail {
				t.Fatalf("exit %d, want %d; stdout %q", code, exitFail, out)
			}
			if lines := strings.Count(errs, "\n"); lines != 1 || !strings.HasPrefix(errs, path+": ") || strings.Count(errs, tt.file) != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q: want one line %q", errs, path+": …"+tt.want)
			}
		})
	}
	code, out, errs := runCLI(t, "", "plugin", "check", filepath.Join(repoRoot, "testdata", "loaderrors", "c-reactor.wasm"))
	if code != exitOK || !strings.HasSuffix(out, "c-reactor.wasm: ok\n") {
		t.Errorf("the reactor build: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
