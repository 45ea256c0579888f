package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listAs sends resources/list (with cursor, if any) as the holder of token
// and returns the URIs, the next cursor and the raw error, if any.
func (s *server) listAs(token, cursor string) (uris []string, next string, rpcErr string) {
	s.t.Helper()
	params := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}
	if cursor != "" {
		params["cursor"] = cursor
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params})
	req, _ := http.NewRequest("POST", s.base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "resources/list")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Result struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		s.t.Fatalf("resources/list: %v: %s", err, raw)
	}
	for _, r := range rpc.Result.Resources {
		uris = append(uris, r.URI)
	}
	return uris, rpc.Result.NextCursor, string(rpc.Error)
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestKeysOnTheWire runs the real server with the files plugin, two
// principals and a policy hiding alice's folder from bob:
//   - bob decodes every cursor he is given and reads none of alice's file
//     names (signed-only cursors carried the files plugin's cursor, the
//     path of the last file listed, in clear);
//   - a cursor minted before a rotation of keys.secretFile pages on after
//     it (SIGHUP reloads the secret files, which the file watcher does not
//     watch) while the old secret is keys.previousFile, and is refused with
//     the restart message once it is dropped.
func TestKeysOnTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "files")
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	root := filepath.Join(dir, "shared")
	for _, d := range []string{plugins, filepath.Join(root, "zzpriv-dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wasm, err := os.ReadFile(filepath.Join(repoRoot, "build", "plugins", "files.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(plugins, "files.wasm"), string(wasm))
	for _, f := range []string{"a.txt", "b.txt", "zzpriv-dir/zzpriv-plan-1.txt", "zzpriv-dir/zzpriv-plan-2.txt", "zz-public.txt"} {
		write(filepath.Join(root, f), "contents of "+f)
	}
	first, second, stranger := strings.Repeat("1a", 20), strings.Repeat("2b", 20), strings.Repeat("3c", 20)
	write(filepath.Join(dir, "current.key"), first+"\n")
	write(filepath.Join(dir, "previous.key"), stranger+"\n")
	const alice, bob = "alice-token-0123456789", "bob-token-0123456789"
	write(filepath.Join(dir, "corral.yaml"), `plugins:
  dir: plugins
catalog:
  pageSize: 2
keys:
  secretFile: current.key
  previousFile: previous.key
auth:
  tokens:
    - {sha256: `+hashHex(alice)+`, principal: alice, groups: [staff]}
    - {sha256: `+hashHex(bob)+`, principal: bob}
policy:
  - {groups: [staff]}
  - principals: [bob]
    plugins: [files]
    resources: ["file://*/a.txt", "file://*/b.txt", "file://*/zz-public.txt"]
plugin:
  files:
    grants:
      files: [shared]
`)
	s := startServer(t, "--config", filepath.Join(dir, "corral.yaml"))

	var seen []string
	cursor := ""
	for range 10 {
		uris, next, rpcErr := s.listAs(bob, cursor)
		if rpcErr != "" {
			t.Fatalf("bob's list: %s", rpcErr)
		}
		seen = append(seen, uris...)
		if next == "" {
			break
		}
		raw, err := base64.RawURLEncoding.DecodeString(next)
		if err != nil {
			t.Fatalf("cursor %q: %v", next, err)
		}
		for _, leak := range []string{"zzpriv", "plan-", ".txt"} {
			if bytes.Contains(raw, []byte(leak)) {
				t.Errorf("bob's cursor shows %q: %q", leak, raw)
			}
		}
		cursor = next
	}
	for _, u := range seen {
		if strings.Contains(u, "zzpriv") {
			t.Errorf("bob listed %s", u)
		}
	}
	if len(seen) != 3 {
		t.Errorf("bob listed %v, want a.txt, b.txt and zz-public.txt", seen)
	}

	// Rotation. alice's first page, under the first secret.
	_, old, rpcErr := s.listAs(alice, "")
	if old == "" || rpcErr != "" {
		t.Fatalf("alice's first page: cursor %q, %s", old, rpcErr)
	}
	write(filepath.Join(dir, "previous.key"), first+"\n")
	write(filepath.Join(dir, "current.key"), second+"\n")
	s.hangup(`"applied":["keys"]`, 1)
	uris, next, rpcErr := s.listAs(alice, old)
	if rpcErr != "" || len(uris) == 0 {
		t.Fatalf("a cursor of the previous secret after rotation: %v, %s", uris, rpcErr)
	}
	write(filepath.Join(dir, "previous.key"), stranger+"\n")
	s.hangup(`"applied":["keys"]`, 2)
	if _, _, rpcErr := s.listAs(alice, old); !strings.Contains(rpcErr, "-32602") || !strings.Contains(rpcErr, "restart the listing") {
		t.Errorf("a cursor of a dropped secret: %s, want -32602 with the restart message", rpcErr)
	}
	// The cursor minted after the rotation is under the current secret.
	if next != "" {
		if _, _, rpcErr := s.listAs(alice, next); rpcErr != "" {
			t.Errorf("a cursor of the current secret: %s", rpcErr)
		}
	}
	if strings.Contains(s.logs.String(), first) || strings.Contains(s.logs.String(), second) {
		t.Error("a secret in the log")
	}
	s.stop()
}
