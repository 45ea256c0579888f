package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The capabilities every answer must carry, whatever is loaded: the
// server runs with a notification hub, so subscribe and listChanged too.
const (
	modernCaps = `"capabilities":{"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	legacyCaps = `"capabilities":{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
)

// coldPlugins is a plugin directory holding the conformance plugin (a Go
// guest, seconds to compile) and an empty compilation cache for it.
func coldPlugins(t *testing.T) (dir, cache string) {
	t.Helper()
	return pluginDir(t), t.TempDir()
}

// TestColdStartAdvertisesCapabilities starts bin/corral on a cold
// compilation cache and asks at once: server/discover and initialize over
// HTTP while /readyz still says the plugins are loading, and initialize
// over stdio. Every answer advertises resources, prompts, tools and
// completions, so no client caches an empty server (issue 17, item 1).
func TestColdStartAdvertisesCapabilities(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := corralBinary(t)
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		dir, cache := coldPlugins(t)
		addr := freeAddr(t)
		cmd := exec.Command(bin, "serve", "--plugins", dir, "--http", addr)
		cmd.Env = append(os.Environ(), "CORRAL_PLUGINS_CACHE_DIR="+cache)
		s := &server{t: t, cmd: cmd, base: "http://" + addr, logs: &syncBuf{}, exited: make(chan error, 1)}
		cmd.Stdout, cmd.Stderr = s.logs, s.logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { s.exited <- cmd.Wait() }()
		defer func() {
			cmd.Process.Kill()
			if t.Failed() {
				t.Logf("server log:\n%s", s.logs.String())
			}
		}()
		readyz := func() int {
			resp, err := http.Get(s.base + "/readyz")
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		s.waitFor("the HTTP listener", func() bool { return readyz() != 0 })
		if code := readyz(); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz %d before the cold compile can have ended, want 503", code)
		}
		post := func(body string, headers map[string]string) string {
			req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		discover := post(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
		initialize := post(legacyInitialize, nil)
		loading := readyz() == http.StatusServiceUnavailable
		if !strings.Contains(discover, modernCaps) {
			t.Errorf("server/discover during the first load: %s\nwant %s", discover, modernCaps)
		}
		if !strings.Contains(initialize, legacyCaps) {
			t.Errorf("initialize during the first load: %s\nwant %s", initialize, legacyCaps)
		}
		if !loading {
			t.Error("the plugins loaded before the answers came: the test did not ask during the first load")
		}
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		dir, cache := coldPlugins(t)
		s := startStdio(t, []string{"CORRAL_PLUGINS_CACHE_DIR=" + cache}, "--plugins", dir)
		s.send(legacyInitialize)
		if got := s.line(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, legacyCaps) {
			t.Errorf("initialize over stdio: %s\nwant %s", got, legacyCaps)
		}
	})
}
