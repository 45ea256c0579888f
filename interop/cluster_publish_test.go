package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// toolNames lists the tools a replica serves (2026-07-28 tools/list).
func toolNames(w *wire, url string) []string {
	w.t.Helper()
	m := w.call(url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`, modernHeaders("tools/list", "")...)
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(m.Result, &r)
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestClusterPublish: three replicas serving the cluster's plugin bucket
// (cluster.plugins, no plugin directory); `corral plugin publish` of a
// small plugin (a hand-written WAT module) is served by all three, and
// `corral plugin unpublish` takes it away from all three; the time each
// took is logged beside a Go guest's (conformance.wasm, 4 MB).
func TestClusterPublish(t *testing.T) {
	if !clusterMode {
		t.Skip("the cluster tests run under make test-cluster (CORRAL_TEST_CLUSTER=1)")
	}
	if why := missingBuild(corralBin, conformanceWasm); why != "" {
		t.Fatal(why)
	}
	t.Setenv("CORRAL_CLUSTER_PLUGINS", "true") // the replicas and the CLI inherit it
	c := startClusterT(t, "", "publish", "")
	cfg := filepath.Join(c.dir, "corral.yaml")
	corral := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(corralBin, args...)
		cmd.Env = append(os.Environ(), "CORRAL_PLUGINS_CACHE_DIR="+filepath.Join(repoRoot, "build", "cluster", "cache"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("corral %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	w := &wire{t: t}
	// everywhere waits until every replica serves tool (or none does).
	everywhere := func(tool string, served bool) time.Duration {
		t.Helper()
		start := time.Now()
		deadline := start.Add(60 * time.Second)
		for {
			n := 0
			for _, r := range c.replicas {
				if has := strings.Contains(" "+strings.Join(toolNames(w, r.url), " ")+" ", " "+tool+" "); has == served {
					n++
				}
			}
			if n == len(c.replicas) {
				return time.Since(start)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s served=%v on %d of %d replicas after 60 s", tool, served, n, len(c.replicas))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, p := range []struct {
		file, name, tool string
	}{
		{filepath.Join(repoRoot, "testdata", "wat", "good.wasm"), "good", "echo"},
		{conformanceWasm, "conformance", "test_simple_text"},
	} {
		out := corral("plugin", "publish", "--config", cfg, p.file)
		if !strings.Contains(out, "published "+p.name+" ") {
			t.Fatalf("publish %s: %s", p.name, out)
		}
		t.Logf("%s published: served by all three replicas %v after the command returned", p.name, everywhere(p.tool, true))
		corral("plugin", "unpublish", "--config", cfg, p.name)
		t.Logf("%s unpublished: gone from all three replicas %v after the command returned", p.name, everywhere(p.tool, false))
	}
}
