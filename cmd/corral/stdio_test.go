package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdioOnly: --stdio switches off the configured listeners, keeps an
// --admin given beside it, and refuses --http or --ws beside it.
func TestStdioOnly(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]any
		want  map[string]any
		err   string
	}{
		{"alone", map[string]any{}, map[string]any{"http.addr": "", "ws.addr": "", "admin.addr": ""}, ""},
		{"with admin", map[string]any{"admin.addr": "127.0.0.1:9"}, map[string]any{"http.addr": "", "ws.addr": "", "admin.addr": "127.0.0.1:9"}, ""},
		{"with empty http", map[string]any{"http.addr": ""}, map[string]any{"http.addr": "", "ws.addr": "", "admin.addr": ""}, ""},
		{"with http", map[string]any{"http.addr": "127.0.0.1:9"}, nil, "drop the flag for http.addr (127.0.0.1:9)"},
		{"with ws", map[string]any{"ws.addr": "127.0.0.1:9"}, nil, "drop the flag for ws.addr (127.0.0.1:9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := stdioOnly(tt.flags)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(tt.flags) != fmt.Sprint(tt.want) {
				t.Errorf("flags %v, want %v", tt.flags, tt.want)
			}
		})
	}
	if code, _, stderr := runCLI(t, "", "serve", "--stdio", "--http", "127.0.0.1:9"); code != exitUsage || !strings.Contains(stderr, "--stdio serves on stdin/stdout only") {
		t.Errorf("serve --stdio --http: exit %d, stderr %q; want usage error", code, stderr)
	}
}

// TestServeStdioIgnoresConfiguredListeners is the README's client
// snippet against a configuration whose http, ws and admin addresses are
// all taken (as by a running `make run`): `serve --stdio` answers on
// stdin/stdout anyway and exits 0 when stdin closes.
func TestServeStdioIgnoresConfiguredListeners(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := pluginDir(t)
	cfg := filepath.Join(dir, "corral.yaml")
	addr := taken.Addr().String()
	os.WriteFile(cfg, []byte(fmt.Sprintf("http:\n  addr: %s\nws:\n  addr: %s\nadmin:\n  addr: %s\nplugins:\n  dir: .\n  cacheDir: %s\n",
		addr, addr, addr, filepath.Join(repoRoot, "build", "cache"))), 0o644)

	s := startStdio(t, nil, "--stdio", "--config", cfg)
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if line := s.line(); !strings.Contains(line, `"id":7`) || !strings.Contains(line, `"tools"`) {
		t.Fatalf("response %q", line)
	}
	s.closeStdin()
	if strings.Contains(s.stderr.String(), "address already in use") {
		t.Errorf("tried to listen: %s", s.stderr.String())
	}
}

// TestListenInUseSaysWhatToDo: serve on a port already taken fails with
// the address, what to do, and the --stdio form, not only the bare
// "bind: address already in use".
func TestListenInUseSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	code, _, stderr := runCLI(t, "", "serve", "--http", addr, "--log-level", "error")
	want := "corral: listen: " + addr + " is in use (another corral, or `make run`?): stop it or choose another port; a client that launches corral itself (Claude Desktop, VS Code, the Inspector) wants `corral serve --stdio` (listen tcp " + addr + ": bind: address already in use)"
	if code != exitFail || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}
