package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
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
