package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tasksMeta is the _meta of a 2026-07-28 request that declares the tasks
// extension (io.modelcontextprotocol/tasks); plainMeta declares nothing.
const (
	tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	plainMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
)

// rawCall posts one 2026-07-28 request and decodes its result or error.
// No pinned client speaks the tasks extension, so this is the raw wire.
func rawCall(t *testing.T, url, method, name, params string) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s}}`, method, params)
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", era2026)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	// A bound for a call that would wait for an instance a task never gave back.
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, name, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, name, err)
	}
	return out.Result, out.Error
}

// TestTaskCancelStopsGuest: a tasks/cancel reaches a guest looping without
// a host call (spin_job) and frees its instance, on the engine under test
// (wazero here; wasmtime's epochs under make test-wasmtime). The plugin
// has one instance, so the plain call after the cancel is served only if
// the cancelled task gave it back.
func TestTaskCancelStopsGuest(t *testing.T) {
	if msg := missingBuild(corralBin, conformanceWasm); msg != "" {
		t.Skip(msg)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(cfg, []byte("plugin:\n  conformance:\n    limits: {instances: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startedHTTPServer(t, "--config", cfg, "--plugins", pluginDir(t))

	res, rerr := rawCall(t, srv.url, "tools/call", "spin_job", `"name":"spin_job","arguments":{},`+tasksMeta)
	id, _ := res["taskId"].(string)
	if rerr != nil || res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call spin_job: want a task, got %v %v", res, rerr)
	}
	task := fmt.Sprintf(`"taskId":%q,%s`, id, tasksMeta)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, _ := rawCall(t, srv.url, "tasks/get", id, task); res["status"] == "working" {
			break
		} else if time.Now().After(end) {
			t.Fatalf("spin_job never working: %v", res)
		}
	}
	time.Sleep(100 * time.Millisecond) // into its loop
	if res, rerr := rawCall(t, srv.url, "tasks/cancel", id, task); rerr != nil || res["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %v %v", res, rerr)
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, _ := rawCall(t, srv.url, "tasks/get", id, task)
		if res["status"] == "cancelled" {
			break
		}
		if res["status"] != "working" || time.Now().After(end) {
			t.Fatalf("spin_job after tasks/cancel: %v, want cancelled", res)
		}
	}
	res, rerr = rawCall(t, srv.url, "tools/call", "greet", `"name":"greet","arguments":{"name":"next"},`+plainMeta)
	if content, _ := res["content"].([]any); rerr != nil || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "Hello, next!") {
		t.Fatalf("greet after the cancel: %v %v", res, rerr)
	}
}
