package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository root (two levels up from cmd/corral).
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodesAndHelp(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("log:\n  level: info\nplugin:\n  files:\n    limits:\n      instances: 0\n"), 0o644)
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("[log]\nlevel = \"debug\"\n"), 0o644)

	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		emptyOther bool
	}{
		{"no args", nil, exitUsage, "", "Commands:", false},
		{"help", []string{"--help"}, exitOK, "Commands:", "", false},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`, false},
		{"serve help", []string{"serve", "--help"}, exitOK, "--plugins DIR", "", false},
		{"serve -h", []string{"serve", "-h"}, exitOK, "--http ADDR", "", false},
		{"serve bad flag", []string{"serve", "--nope"}, exitUsage, "", "flag provided but not defined: -nope", false},
		{"serve extra arg", []string{"serve", "x"}, exitUsage, "", `unexpected argument "x"`, false},
		{"serve bad config", []string{"serve", "--config", bad}, exitFail, "", "plugin.files.limits.instances", false},
		{"serve bad level", []string{"serve", "--log-level", "loud"}, exitFail, "", "flag: log.level", false},
		{"plugin help", []string{"plugin", "--help"}, exitOK, "inspect [--json]", "", false},
		{"plugin no sub", []string{"plugin"}, exitUsage, "", "missing subcommand", false},
		{"plugin bad sub", []string{"plugin", "eat"}, exitUsage, "", `unknown subcommand "eat"`, false},
		{"inspect help", []string{"plugin", "inspect", "--help"}, exitOK, "--json", "", false},
		{"inspect no file", []string{"plugin", "inspect"}, exitUsage, "", "want exactly one FILE.wasm", false},
		{"inspect missing file", []string{"plugin", "inspect", filepath.Join(dir, "none.wasm")}, exitFail, "", "no such file", false},
		{"inspect garbage", []string{"plugin", "inspect", bad}, exitFail, "", "bad.yaml", false},
		{"check help", []string{"plugin", "check", "--help"}, exitOK, "--config FILE", "", false},
		{"check garbage", []string{"plugin", "check", bad}, exitFail, "", "bad.yaml", false},
		{"config help", []string{"config", "--help"}, exitOK, "corral config check FILE", "", false},
		{"config check help", []string{"config", "check", "--help"}, exitOK, "line and key", "", false},
		{"config check bad", []string{"config", "check", bad}, exitFail, "",
			"bad.yaml:6: plugin.files.limits.instances: must be between 1 and 256", true},
		{"config check good", []string{"config", "check", good}, exitOK, "ok", "", true},
		{"config check missing", []string{"config", "check", filepath.Join(dir, "none.yaml")}, exitFail, "", "cannot read", false},
		{"config check no file", []string{"config", "check"}, exitUsage, "", "want exactly one FILE", false},
		{"version", []string{"version"}, exitOK, "corral ", "", true},
		{"version help", []string{"version", "--help"}, exitOK, "Usage: corral version", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if tt.emptyOther && tt.code == exitOK && stderr != "" {
				t.Errorf("unexpected stderr: %s", stderr)
			}
			if tt.emptyOther && tt.code != exitOK && stdout != "" {
				t.Errorf("unexpected stdout: %s", stdout)
			}
		})
	}
}

func builtPlugins(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(repoRoot, "build", "plugins", n+".wasm")); err != nil {
			t.Skipf("build/plugins/%s.wasm missing (run make plugins)", n)
		}
	}
}

func TestInspectAndCheckRealPlugin(t *testing.T) {
	builtPlugins(t, "conformance")
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", filepath.Join(repoRoot, "build", "cache"))
	wasm := filepath.Join(repoRoot, "build", "plugins", "conformance.wasm")
	code, out, errs := runCLI(t, "", "plugin", "inspect", wasm)
	if code != exitOK || !strings.Contains(out, "name:         conformance") || !strings.Contains(out, "test_simple_prompt") {
		t.Errorf("inspect: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "plugin", "inspect", "--json", wasm)
	var m struct {
		Name   string `json:"name"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(out), &m); code != exitOK || err != nil || m.Name != "conformance" || len(m.SHA256) != 64 {
		t.Errorf("inspect --json: exit %d, %v, %+v\n%s", code, err, m, errs)
	}
	code, out, errs = runCLI(t, "", "plugin", "check", wasm)
	if code != exitOK || !strings.Contains(out, "tools: ") {
		t.Errorf("check: exit %d\n%s\n%s", code, out, errs)
	}
	// A pin that does not match is a problem.
	cfg := filepath.Join(t.TempDir(), "pin.yaml")
	os.WriteFile(cfg, []byte("plugins:\n  cacheDir: "+filepath.Join(repoRoot, "build", "cache")+"\nplugin:\n  conformance:\n    sha256: "+strings.Repeat("ab", 32)+"\n"), 0o644)
	code, _, errs = runCLI(t, "", "plugin", "check", "--config", cfg, wasm)
	if code != exitFail || !strings.Contains(errs, "the binding pins") {
		t.Errorf("check with a wrong pin: exit %d\n%s", code, errs)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// TestMain removes the binary corralBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// corralBinary builds cmd/corral once per test run (TestMain removes it).
func corralBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corral-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "corral")
		out, err := exec.Command("go", "build", "-trimpath", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeSampleConfig runs `corral serve` as `make run` does (the built
// binary with testdata/sample/corral.yaml, over HTTP), waits for /readyz and
// lists resources, then shuts it down with SIGTERM.
func TestServeSampleConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "files", "issues")
	bin := corralBinary(t)
	addr, admin := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "serve", "--config", filepath.Join(repoRoot, "testdata", "sample", "corral.yaml"), "--http", addr, "--admin", admin)
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()

	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("corral exited before ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz not 200 within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "resources/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rpc struct {
		Result struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Error != nil {
		t.Fatalf("resources/list: %v: %s", err, raw)
	}
	// The real plugins, and not the conformance fixtures the sample keeps
	// off: what a newcomer's `make run` shows.
	var issue, test bool
	for _, r := range rpc.Result.Resources {
		issue = issue || r.URI == "issues://1"
		test = test || strings.HasPrefix(r.URI, "test://")
	}
	if !issue || test {
		t.Errorf("resources/list: issues://1 listed %v, a test:// fixture listed %v; want true, false: %s", issue, test, raw)
	}

	mresp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mraw, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{"corral_plugins_loaded ", "corral_build_info{", `corral_reloads_total{result="ok"}`} {
		if !strings.Contains(string(mraw), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	if !strings.Contains(logs.String(), "corral stopped") {
		t.Errorf("no graceful stop in the log")
	}
}

// TestServeStdio serves over stdin/stdout with the admin endpoints on their
// own listener, answers a request, and exits 0 when stdin closes.
func TestServeStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	admin := freeAddr(t)
	s := startStdio(t, nil, "--plugins", pluginDir(t), "--admin", admin)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("admin /readyz not 200 within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if line := s.line(); !strings.Contains(line, `"id":7`) || !strings.Contains(line, "test_simple_text") {
		t.Errorf("response %s", line)
	}
	s.closeStdin()
}

func TestCheckReportsConflicts(t *testing.T) {
	builtPlugins(t, "conformance")
	cache := filepath.Join(repoRoot, "build", "cache")
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", cache)
	data, err := os.ReadFile(filepath.Join(repoRoot, "build", "plugins", "conformance.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	// The same plugin under another name in the directory is a replacement,
	// not a conflict.
	os.WriteFile(filepath.Join(plugins, "old-conformance.wasm"), data, 0o644)
	candidate := filepath.Join(dir, "conformance.wasm")
	os.WriteFile(candidate, data, 0o644)
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte("plugins:\n  dir: plugins\n"), 0o644)
	if code, out, errs := runCLI(t, "", "plugin", "check", "--config", cfg, candidate); code != exitOK {
		t.Errorf("check of a replacement: exit %d\n%s\n%s", code, out, errs)
	}

	// testdata/wat: conflict.wasm claims the scheme of good.wasm.
	good, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "wat", "good.wasm"))
	if err != nil {
		t.Skipf("testdata/wat/good.wasm: %v", err)
	}
	os.WriteFile(filepath.Join(plugins, "good.wasm"), good, 0o644)
	conflict := filepath.Join(repoRoot, "testdata", "wat", "conflict.wasm")
	code, _, errs := runCLI(t, "", "plugin", "check", "--config", cfg, conflict)
	if code != exitFail || !strings.Contains(errs, `scheme "good" is also claimed by plugin good (good.wasm)`) {
		t.Errorf("check of a conflicting plugin: exit %d\n%s", code, errs)
	}
}
