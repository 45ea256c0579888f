package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDrainDelay: with http.drainDelay set, SIGTERM first turns /readyz to
// 503 and stops keep-alives while /mcp still answers, so a balancer sees
// the replica leave before its listener closes; then the server stops
// cleanly.
func TestDrainDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts bin/corral")
	}
	t.Setenv("CORRAL_HTTP_DRAIN_DELAY", "3s")
	s := startServer(t, "--plugins", pluginDir(t))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitFor("/readyz 503 while draining", func() bool {
		resp, err := http.Get(s.base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz during the drain: %v (the listener closed before the delay)", err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	req, err := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/mcp during the drain: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"capabilities"`) {
		t.Errorf("/mcp during the drain: %d %s, want 200 with the server's capabilities", resp.StatusCode, body)
	}
	if !resp.Close {
		t.Errorf("/mcp during the drain kept the connection alive; want Connection: close")
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("exit after the drain: %v, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20s of SIGTERM")
	}
	if logs := s.logs.String(); !strings.Contains(logs, `"msg":"draining","for":"3s"`) || !strings.Contains(logs, "corral stopped") {
		t.Errorf("want a logged drain of 3s, then a graceful stop:\n%s", logs)
	}
}
