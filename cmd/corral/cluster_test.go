package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// startNATS runs a NATS server with JetStream in the test process and
// returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return fmt.Sprintf("nats://127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
}

// clusterEnv is the environment of replica id of a cluster on nats.
func clusterEnv(nats, id string) []string {
	return []string{"CORRAL_CLUSTER_NATS=" + nats, "CORRAL_CLUSTER_NAME=wiretest", "CORRAL_CLUSTER_REPLICA=" + id,
		"CORRAL_KEYS_SECRET=" + strings.Repeat("k", 32)}
}

// modernPost sends a 2026-07-28 request for method (and name) to s.
func (s *wireServer) modernPost(t *testing.T, method, name, params string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s%s}}`, method, modernMeta, params)
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return s.post(t, "", body, h)
}

// TestClusterEventsCross: two bin/corral replicas on one NATS: a listen
// stream held by replica 2 hears the tools/list_changed that a tool call
// on replica 1 caused; each replica's /status names its replica and the
// connection, and its metrics count the event.
func TestClusterEventsCross(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	nats := startNATS(t)
	grant := "  conformance:\n    grants:\n      notify: true\n"
	r1 := startWireEnv(t, clusterEnv(nats, "r1"), grant, "conformance")
	r2 := startWireEnv(t, clusterEnv(nats, "r2"), grant, "conformance")
	for _, r := range []struct {
		s  *wireServer
		id string
	}{{r1, "r1"}, {r2, "r2"}} {
		deadline := time.Now().Add(10 * time.Second)
		for r.s.metric(t, "corral_cluster_connected") != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s not connected to NATS", r.id)
			}
			time.Sleep(20 * time.Millisecond)
		}
		resp, err := http.Get(r.s.admin + "/status")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"cluster":{"name":"wiretest","replica":"`+r.id+`","connected":true`) {
			t.Errorf("%s /status: %s", r.id, b)
		}
	}

	listen := r2.modernPost(t, "subscriptions/listen", "", `,"notifications":{"toolsListChanged":true}`)
	defer listen.Body.Close()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(listen.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- data
			}
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("listen stream ended before %s", what)
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s on replica 2's listen stream within 10s", what)
		}
		return ""
	}
	if ack := next("acknowledgement"); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first message %s", ack)
	}
	call := r1.modernPost(t, "tools/call", "test_trigger_tool_change", `,"name":"test_trigger_tool_change","arguments":{}`)
	b, _ := io.ReadAll(call.Body)
	call.Body.Close()
	if !strings.Contains(string(b), "tools_list_changed published") {
		t.Fatalf("tool call on replica 1: %s", b)
	}
	if got := next("tools/list_changed"); !strings.Contains(got, `"method":"notifications/tools/list_changed"`) {
		t.Errorf("replica 2's listen stream: %s", got)
	}
	if n := r1.metric(t, `corral_cluster_events_total{direction="sent"}`); n != 1 {
		t.Errorf("replica 1 sent %v events, want 1", n)
	}
	if n := r2.metric(t, `corral_cluster_events_total{direction="received"}`); n != 1 {
		t.Errorf("replica 2 received %v events, want 1", n)
	}
}

// TestClusterNeedsSecret: a replica configured for a cluster without
// keys.secret refuses to start and says why.
func TestClusterNeedsSecret(t *testing.T) {
	t.Setenv("CORRAL_CLUSTER_NATS", "nats://127.0.0.1:4222")
	t.Setenv("CORRAL_KEYS_SECRET", "")
	code, _, errs := runCLI(t, "", "serve", "--http", "127.0.0.1:0")
	if code != exitFail || !strings.Contains(errs, "cluster.nats: a cluster needs the shared secret: set keys.secret or keys.secretFile") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}

// replica is a bin/corral replica serving the cluster's plugin bucket.
type replica struct {
	*wireServer
	id string
}

// startBucketReplica runs replica id of the cluster on nats, taking its
// plugins from the cluster's plugin bucket (cluster.plugins), and waits
// until it is ready.
func startBucketReplica(t *testing.T, nats, id string) replica {
	t.Helper()
	dir := t.TempDir()
	addr, admin := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf("http:\n  addr: %s\nadmin:\n  addr: %s\nlog:\n  level: info\nplugins:\n  cacheDir: %s\ncluster:\n  plugins: true\n",
		addr, admin, filepath.Join(repoRoot, "build", "cache"))
	file := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(corralBinary(t), "serve", "--config", file)
	cmd.Env = append(os.Environ(), clusterEnv(nats, id)...)
	s := &wireServer{base: "http://" + addr, admin: "http://" + admin, logs: &syncBuf{}}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s log:\n%s", id, s.logs.String())
		}
	})
	r := replica{s, id}
	waitUntil(t, id+" ready", 60*time.Second, func() bool {
		resp, err := http.Get(s.admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return r
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// served returns the plugins r serves and its set generation, from /status.
func (r replica) served(t *testing.T) (plugins []string, generation string) {
	t.Helper()
	resp, err := http.Get(r.admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Generation string `json:"generation"`
		Files      []struct {
			Plugin, State string
		} `json:"files"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, f := range st.Files {
		if f.State == "serving" {
			plugins = append(plugins, f.Plugin)
		}
	}
	return plugins, st.Generation
}

// TestClusterPublish: `corral plugin publish` puts a plugin in the
// cluster's bucket and every replica serving the bucket loads it, with
// the same set generation; `corral plugin unpublish` takes it away from
// all of them; a name the bucket lacks is an error.
func TestClusterPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	nats := startNATS(t)
	rs := []replica{startBucketReplica(t, nats, "r1"), startBucketReplica(t, nats, "r2")}
	for _, kv := range clusterEnv(nats, "cli") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", filepath.Join(repoRoot, "build", "cache"))

	all := func(what string, want []string) time.Duration {
		t.Helper()
		start := time.Now()
		waitUntil(t, what, 20*time.Second, func() bool {
			gens := map[string]bool{}
			for _, r := range rs {
				p, g := r.served(t)
				if !slices.Equal(p, want) {
					return false
				}
				gens[g] = true
			}
			if len(gens) != 1 {
				return false
			}
			for g := range gens { // and the metric says the same
				for _, r := range rs {
					if r.metric(t, `corral_plugin_set_info{generation="`+g+`"}`) != 1 {
						return false
					}
				}
			}
			return true
		})
		return time.Since(start)
	}
	code, out, errs := runCLI(t, "", "plugin", "publish", filepath.Join(repoRoot, "testdata", "wat", "good.wasm"))
	if code != exitOK || !strings.Contains(out, "published good 1.0.0 (sha256 ") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("published: served by both replicas, one generation, %v after the command returned", all("good served by every replica", []string{"good"}))
	if got := (served{base: rs[1].base}).read(t, "good://hello"); !strings.Contains(got, `"contents"`) {
		t.Errorf("good://hello on r2: %s", got)
	}

	code, out, errs = runCLI(t, "", "plugin", "unpublish", "good")
	if code != exitOK || !strings.Contains(out, "unpublished good") {
		t.Fatalf("unpublish: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("unpublished: gone from both replicas %v after the command returned", all("good gone from every replica", nil))
	if code, _, errs := runCLI(t, "", "plugin", "unpublish", "good"); code != exitFail || !strings.Contains(errs, "unpublish good: not published") {
		t.Errorf("unpublishing it again: exit %d, %s", code, errs)
	}
}
