package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wireServer is a running bin/corral (built by corralBinary) serving
// Streamable HTTP and WebSocket on loopback, with its operator endpoints
// on a listener of their own.
type wireServer struct {
	base  string // http://127.0.0.1:port of the MCP listener
	admin string // http://127.0.0.1:port of the admin listener
	logs  *syncBuf
	pid   int    // the corral process
	dir   string // its plugin folder
}

// wireTokens are the bearer tokens of the principals wire tests use.
var wireTokens = map[string]string{"alice": "token-of-alice-0123456789", "bob": "token-of-bob-0123456789"}

// wireAuth is the auth and policy section every wire test serves: alice
// sees everything, bob only the issues plugin.
func wireAuth() string {
	var b strings.Builder
	b.WriteString("auth:\n  tokens:\n")
	for _, p := range []string{"alice", "bob"} {
		sum := sha256.Sum256([]byte(wireTokens[p]))
		fmt.Fprintf(&b, "    - {sha256: %s, principal: %s}\n", hex.EncodeToString(sum[:]), p)
	}
	b.WriteString("policy:\n  - principals: [alice]\n  - principals: [bob]\n    plugins: [issues]\n")
	return b.String()
}

// startWire serves the named bundled plugins (conformance, issues) with
// extra appended to the configuration, and waits until corral is ready.
func startWire(t testing.TB, extra string, plugins ...string) *wireServer {
	t.Helper()
	return startWireEnv(t, nil, extra, plugins...)
}

// startWireEnv is startWire with CORRAL_* variables added to corral's
// environment.
func startWireEnv(t testing.TB, env []string, extra string, plugins ...string) *wireServer {
	t.Helper()
	builtPlugins(t, plugins...)
	bin := corralBinary(t)
	dir := t.TempDir()
	pdir := filepath.Join(dir, "plugins")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range plugins {
		data, err := os.ReadFile(filepath.Join(repoRoot, "build", "plugins", n+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, n+".wasm"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, admin := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`http:
  addr: %s
admin:
  addr: %s
log:
  level: warn
plugins:
  dir: %s
  dataDir: %s
  cacheDir: %s
plugin:
  issues:
    grants:
      files: [%s]
      config:
        data: issues.json
%s`, addr, admin, pdir, filepath.Join(dir, "data"), filepath.Join(repoRoot, "build", "cache"),
		filepath.Join(repoRoot, "testdata", "sample", "issues"), extra)
	file := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	cmd.Env = append(os.Environ(), env...)
	s := &wireServer{base: "http://" + addr, admin: "http://" + admin, logs: &syncBuf{}, dir: pdir}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("corral exited before ready: %v\n%s", err, s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz not 200 within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends one JSON-RPC message to /mcp as principal (a key of
// wireTokens, or "" for none) with the given extra headers.
func (s *wireServer) post(t testing.TB, principal, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if principal != "" {
		req.Header.Set("Authorization", "Bearer "+wireTokens[principal])
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// wireAnswer is what a comparison of two answers looks at: the status,
// the headers but Date, and the body bytes.
type wireAnswer struct {
	Status int
	Header http.Header
	Body   string
}

func answerOf(t testing.TB, resp *http.Response) wireAnswer {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	return wireAnswer{resp.StatusCode, h, string(bytes.TrimSpace(body))}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modernHeaders are the headers a 2026-07-28 request for method carries.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}
