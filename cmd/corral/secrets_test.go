package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValueFromEnv: a plugin config value taken from an environment
// variable ({env: NAME}) reaches the plugin (the issues plugin reads its
// tracker from the file the value names, and issues://1 answers) and
// appears nowhere in the server's log at debug level, not even when the
// configuration is reloaded, nor on the operator console's pages.
func TestConfigValueFromEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "issues")
	const secret = "s3cr3t-7f2a9c.json" // the tracker's file name: only the env var says it
	dir := t.TempDir()
	root := filepath.Join(dir, "tracker")
	os.MkdirAll(filepath.Join(root), 0o755)
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "sample", "issues", "issues.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, secret), data, 0o644)
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(plugins, 0o755)
	wasm, err := os.ReadFile(filepath.Join(repoRoot, "build", "plugins", "issues.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(plugins, "issues.wasm"), wasm, 0o644)
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte(`plugins:
  dir: plugins
plugin:
  issues:
    file: plugins/issues.wasm
    grants:
      files: [tracker]
      log: true
      config:
        data: {env: CORRAL_TEST_ISSUES_DATA}
`), 0o644)
	t.Setenv("CORRAL_TEST_ISSUES_DATA", secret)

	admin := freeAddr(t)
	s := startServer(t, "--config", cfg, "--log-level", "debug", "--admin", admin)
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"issues://1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "resources/read")
	req.Header.Set("Mcp-Name", "issues://1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `"uri":"issues://1"`) || !strings.Contains(string(raw), "Login fails with SSO") {
		t.Fatalf("issues://1 with the tracker named by the env var: %s", raw)
	}
	// The operator console shows the plugin, its grants and its config
	// keys, never a value.
	for _, page := range []string{"/console/", "/console/plugin/issues", "/console/resources"} {
		resp, err := http.Get("http://" + admin + page)
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s = %d", page, resp.StatusCode)
		}
		if page == "/console/plugin/issues" && !strings.Contains(string(html), "data") {
			t.Errorf("%s does not name the config key data:\n%s", page, html)
		}
		if strings.Contains(string(html), "s3cr3t-7f2a9c") {
			t.Errorf("the env var's value is on the console's %s", page)
		}
	}
	s.hangup("SIGHUP: reloading", 1)
	s.stop()
	if strings.Contains(s.logs.String(), "s3cr3t-7f2a9c") {
		t.Errorf("the env var's value is in the log:\n%s", s.logs.String())
	}
}
