package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// served is a running `corral serve` (the built binary) over HTTP.
type served struct {
	base string
	logs *syncBuf
}

// startServe starts the binary with args plus --http and waits for /readyz.
func startServe(t *testing.T, args ...string) served {
	t.Helper()
	return startServeEnv(t, []string{"CORRAL_PLUGINS_CACHE_DIR=" + filepath.Join(repoRoot, "build", "cache")}, args...)
}

// startServeEnv is startServe with env added to the environment.
func startServeEnv(t *testing.T, env []string, args ...string) served {
	t.Helper()
	bin := corralBinary(t)
	addr := freeAddr(t)
	cmd := exec.Command(bin, append([]string{"serve", "--http", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	s := served{base: "http://" + addr, logs: logs}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz not 200 within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// read sends resources/read for uri and returns the raw answer.
func (s served) read(t *testing.T, uri string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "resources/read")
	req.Header.Set("Mcp-Name", uri)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// TestServeNamesUngrantedCapabilities: serving the bundled plugins with no
// configuration names, at load, the capability files requests and the key
// that would grant it.
func TestServeNamesUngrantedCapabilities(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "files", "issues", "conformance")
	s := startServe(t, "--plugins", filepath.Join(repoRoot, "build", "plugins"))
	logs := s.logs.String()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"plugin":"files"`) && strings.Contains(line, `"capability":"files"`) &&
			strings.Contains(line, `"grant":"plugin.files.grants.files"`) && strings.Contains(line, "requires a capability") {
			return
		}
	}
	t.Errorf("no load-time line names files' missing grant plugin.files.grants.files:\n%s", logs)
}

// TestServeHijackerLosesToBoundPlugin: a file sorting before
// conformance.wasm and claiming test:// does not answer test://static-text
// when the configuration binds conformance, and the log names it.
func TestServeHijackerLosesToBoundPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "conformance")
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	for src, dst := range map[string]string{
		filepath.Join(repoRoot, "build", "plugins", "conformance.wasm"): "conformance.wasm",
		filepath.Join(repoRoot, "testdata", "wat", "hijack.wasm"):       "aaa.wasm",
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(plugins, dst), data, 0o644)
	}
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte("plugins:\n  dir: plugins\nplugin:\n  conformance:\n    file: plugins/conformance.wasm\n"), 0o644)
	s := startServe(t, "--config", cfg)
	if got := s.read(t, "test://static-text"); strings.Contains(got, "HIJACKED") || !strings.Contains(got, `"contents"`) {
		t.Errorf("test://static-text: %s", got)
	}
	if logs := s.logs.String(); !strings.Contains(logs, "aaa.wasm") || !strings.Contains(logs, "which the configuration binds") {
		t.Errorf("the log does not name the refused hijacker:\n%s", logs)
	}
}

// TestCheckRequiredCapability: `corral plugin check` fails when a
// capability the plugin requires is not granted, naming the key, and
// passes once it is.
func TestCheckRequiredCapability(t *testing.T) {
	builtPlugins(t, "files")
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", filepath.Join(repoRoot, "build", "cache"))
	wasm := filepath.Join(repoRoot, "build", "plugins", "files.wasm")
	code, out, errs := runCLI(t, "", "plugin", "check", wasm)
	if code != exitFail || !strings.Contains(errs, `required capability "files" is not granted (grant it with plugin.files.grants.files)`) {
		t.Errorf("check without grants: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, `optional capability "log" is not granted (grant it with plugin.files.grants.log)`) {
		t.Errorf("check without grants does not note the optional log capability:\n%s", out)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte("plugin:\n  files:\n    grants:\n      files: ["+dir+"]\n"), 0o644)
	if code, out, errs := runCLI(t, "", "plugin", "check", "--config", cfg, wasm); code != exitOK {
		t.Errorf("check with the root granted: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "plugin", "inspect", wasm)
	if code != exitOK || !strings.Contains(out, "capabilities: files (required), log") {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
}

// TestCheckReportsImpostor: `corral plugin check` of a file in the plugin
// directory that declares a name the configuration binds to another file
// reports it refused, and why.
func TestCheckReportsImpostor(t *testing.T) {
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", filepath.Join(repoRoot, "build", "cache"))
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "plugins"), 0o755)
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte("plugins:\n  dir: plugins\nplugin:\n  issues:\n    file: plugins/issues.wasm\n"), 0o644)
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "wat", "impostor.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	impostor := filepath.Join(dir, "plugins", "aaa.wasm")
	os.WriteFile(impostor, data, 0o644)
	code, out, errs := runCLI(t, "", "plugin", "check", "--config", cfg, impostor)
	if code != exitFail || !strings.Contains(errs, "refused: declares plugin issues but does not match the binding: the binding names the file") {
		t.Errorf("check of the impostor: exit %d\n%s\n%s", code, out, errs)
	}
}
