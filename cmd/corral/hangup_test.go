package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is a running `corral serve` (the built binary) on loopback.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	logs   *syncBuf
	exited chan error
}

// startServer runs `corral serve --http ADDR args...` and waits until
// /readyz answers 200.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(corralBinary(t), append([]string{"serve", "--http", addr}, args...)...)
	cmd.Env = append(os.Environ(), "CORRAL_PLUGINS_CACHE_DIR="+filepath.Join(repoRoot, "build", "cache"))
	s := &server{t: t, cmd: cmd, base: "http://" + addr, logs: &syncBuf{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	s.waitFor("/readyz 200", func() bool { return s.ready() })
	return s
}

func (s *server) ready() bool {
	resp, err := http.Get(s.base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// waitFor polls cond until it holds, failing the test if the server exits
// first or a minute passes.
func (s *server) waitFor(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case err := <-s.exited:
			s.t.Fatalf("corral exited while waiting for %s: %v", what, err)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no %s within 60s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// toolsList returns the raw body of a tools/list answer (an error when no
// plugin serves tools).
func (s *server) toolsList() string {
	s.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `"jsonrpc":"2.0"`) {
		s.t.Fatalf("tools/list: %d %s", resp.StatusCode, raw)
	}
	return string(raw)
}

// hangup sends SIGHUP and waits until the server has logged want n times
// in all.
func (s *server) hangup(want string, n int) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		s.t.Fatal(err)
	}
	s.waitFor("log line "+want, func() bool { return strings.Count(s.logs.String(), want) >= n })
}

// stop sends SIGTERM and checks the server drains and exits 0.
func (s *server) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Errorf("exit after SIGTERM: %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		s.t.Fatal("no exit within 15s of SIGTERM")
	}
	if !strings.Contains(s.logs.String(), "corral stopped") {
		s.t.Errorf("no graceful stop in the log")
	}
}

func pluginDir(t *testing.T) string {
	t.Helper()
	builtPlugins(t, "conformance")
	data, err := os.ReadFile(filepath.Join(repoRoot, "build", "plugins", "conformance.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "conformance.wasm"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHangupWithoutConfig: with no configuration file, SIGHUP is logged and
// changes nothing; the server neither exits nor stops answering.
func TestHangupWithoutConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startServer(t, "--plugins", pluginDir(t))
	before := s.toolsList()
	const line = "SIGHUP: no configuration file"
	s.hangup(line, 1)
	s.hangup(line, 2)
	if !s.ready() {
		t.Error("/readyz not 200 after SIGHUP")
	}
	if after := s.toolsList(); after != before {
		t.Errorf("tools/list changed across SIGHUP:\n%s\n%s", before, after)
	}
	if strings.Contains(s.logs.String(), "config reloaded") {
		t.Error("a reload without a configuration file")
	}
	s.stop()
}

// TestHangupReloads: SIGHUP reloads the configuration file. The file is a
// symbolic link into another directory, whose changes the file watcher
// does not see, so only the signal can apply the new value: disabling the
// conformance plugin removes its tools.
func TestHangupReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	plugins := pluginDir(t)
	real := filepath.Join(t.TempDir(), "real.yaml")
	write := func(enabled bool) {
		t.Helper()
		body := "plugins:\n  dir: " + plugins + "\nplugin:\n  conformance:\n    enabled: " + map[bool]string{true: "true", false: "false"}[enabled] + "\n"
		if err := os.WriteFile(real, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(true)
	link := filepath.Join(t.TempDir(), "corral.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--config", link)
	if !strings.Contains(s.toolsList(), "test_simple_text") {
		t.Fatalf("conformance tools not served: %s", s.toolsList())
	}

	write(false)
	s.hangup("SIGHUP: reloading the configuration", 1)
	s.waitFor("conformance disabled", func() bool { return !strings.Contains(s.toolsList(), "test_simple_text") })

	// A file that no longer parses: logged, the running configuration
	// stays, the server lives on.
	if err := os.WriteFile(real, []byte("plugin: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.hangup("config reload failed", 1)
	if strings.Contains(s.toolsList(), "test_simple_text") || !s.ready() {
		t.Error("a failed reload changed the running configuration")
	}

	write(true)
	s.hangup("SIGHUP: reloading the configuration", 3)
	s.waitFor("conformance enabled again", func() bool { return strings.Contains(s.toolsList(), "test_simple_text") })
	s.stop()
}
