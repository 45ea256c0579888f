package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// notifyMJS is the TypeScript notification client.
var notifyMJS = filepath.Join(repoRoot, "interop", "node", "notify.mjs")

// TestTSClientNotifications runs notify.mjs (TypeScript SDK v2) in both
// eras over stdio and Streamable HTTP: a subscribed file's update and
// list_changed after a plugin is added.
func TestTSClientNotifications(t *testing.T) {
	for _, f := range []string{peersNode, peersTSSDK} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("TypeScript SDK peer not installed (%s missing): run `make peers`", f)
		}
	}
	src, err := os.ReadFile(notifyMJS)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.CreateTemp(peersDir, "notify-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(script.Name()) })
	if _, err := script.Write(src); err != nil {
		t.Fatal(err)
	}
	script.Close()

	for _, era := range eras {
		pin := era
		if era == era2025 {
			pin = "legacy"
		}
		for _, kind := range []string{"stdio", "http"} {
			t.Run(kind+"/"+era, func(t *testing.T) {
				f := newNotifyFixture(t)
				args := []string{script.Name(), kind}
				if kind == "http" {
					args = append(args, f.http(t)+"/mcp")
				} else {
					args = append(args, corralBin, "serve", "--config", f.cfg)
				}
				ctx, cancel := context.WithTimeout(context.Background(), tsClientTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, peersNode, args...)
				cmd.Dir = peersDir
				cmd.Env = append(os.Environ(), "PIN="+pin, "WATCH_FILE="+f.file, "WATCH_URI="+f.uri(),
					"PLUGIN_SRC="+conformanceWasm, "PLUGIN_DST="+filepath.Join(f.dir, "conformance.wasm"))
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				runErr := cmd.Run()
				n := 0
				sc := bufio.NewScanner(&stdout)
				for sc.Scan() {
					var c tsCheck
					if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
						t.Errorf("notify.mjs printed a line that is not a check: %q", sc.Text())
						continue
					}
					n++
					if !c.OK {
						t.Errorf("FAIL %s: %s", c.Check, c.Detail)
					}
				}
				if runErr != nil || n != 3 {
					t.Errorf("notify.mjs: %v, %d checks (want 3)\nstderr:\n%s", runErr, n, tail(stderr.String(), 4000))
				}
			})
		}
	}
}
