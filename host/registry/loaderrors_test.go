package registry

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/plugin"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLoadErrorsLogged serves a directory of modules built the wrong way
// (testdata/loaderrors) and checks that the log and the status say, once
// and on one line, why each does not load and how to build it.
func TestLoadErrorsLogged(t *testing.T) {
	fixtures := filepath.Join(buildDir, "..", "testdata", "loaderrors")
	tests := []struct{ src, file, want string }{
		{"c-command.wasm", "c-command.wasm", "compile: the module is a WASI command (it exports _start), and corral loads reactors: rebuild it as a reactor: Go -buildmode=c-shared, C -mexec-model=reactor, Rust a cdylib crate"},
		{"truncated.wasm", "truncated.wasm", "compile: the file is truncated or corrupt: it ends, at 250 bytes, inside what it declares; rebuild it or copy it again in full"},
		{"native.elf", "native.wasm", "compile: the file is a native ELF executable, not WebAssembly: build it for wasm32-wasi"},
		{"rust-describe.wasm", "rust-describe.wasm", `describe: bad_output: answered an error instead of its manifest, code internal: corral: plugin "misdeclared": resource "docs://index" is outside the plugin's schemes ["notes"]`},
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join(fixtures, tt.src))
		if err != nil {
			t.Fatal(err)
		}
		writeRaw(t, dir, tt.file, b)
	}
	logs := &lockedBuffer{}
	r := startWith(t, Options{
		Dir: dir, Loader: WasmLoader(rt), Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Debounce: 30 * time.Millisecond, Rescan: 500 * time.Millisecond, DrainGrace: 20 * time.Millisecond,
	}, nil)
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			st := settledState(t, r, tt.file, time.Minute)
			if st.State != StateFailed || !strings.Contains(st.Error, tt.want) {
				t.Errorf("status %s %q, want failed with %q", st.State, st.Error, tt.want)
			}
			if strings.Contains(st.Error, "compile: compile:") || strings.Contains(st.Error, "\n") {
				t.Errorf("status error %q repeats a step or spans lines", st.Error)
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, filepath.Join(dir, tt.file)) && strings.Contains(l, "not loaded") {
					line = l
				}
			}
			if !strings.Contains(line, strings.ReplaceAll(tt.want, `"`, `\"`)) {
				t.Errorf("no log line for %s says %q:\n%s", tt.file, tt.want, logs.String())
			}
		})
	}
}
