package interop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cluster end-to-end (issue 14), run by `make test-cluster`, which sets
// CORRAL_TEST_CLUSTER=1: a NATS server process built from its module by
// install-nats.sh, three bin/corral replicas sharing it, one secret
// (keys.secret) and one plugin directory, behind bin/corral-rr, a
// round-robin proxy that sends each request to the next replica. Under it,
// every HTTP client of this package judges the proxy instead of one
// process (sharedConformanceServer), and the TestCluster tests below judge
// what only a cluster can get wrong, each request sent to a replica of
// its choosing.
var (
	clusterMode = os.Getenv("CORRAL_TEST_CLUSTER") == "1"
	natsBin     = envOr("NATS_SERVER_BIN", filepath.Join(repoRoot, "build", "tools", "nats-server"))
	rrBin       = envOr("CORRAL_RR_BIN", filepath.Join(repoRoot, "bin", "corral-rr"))
	// fixtureWasm is the bench fixture (plugins/bench/fixture): its tool
	// "touch" notifies subscribers of bfx000://doc.
	fixtureWasm = envOr("CORRAL_FIXTURE_WASM", filepath.Join(repoRoot, "build", "cluster", "bfx000.wasm"))
	// kvWasm is plugins/testing/kvstore: kv_set and kv_get on its kv store.
	kvWasm = envOr("CORRAL_KV_WASM", filepath.Join(repoRoot, "build", "cluster", "kvstore.wasm"))
)

// kvQuota is the kv fixture's store quota in the cluster tests.
const kvQuota = 1024

// clusterSecret is the keys.secret every replica shares.
const clusterSecret = "the interop cluster's secret, shared by every replica"

// conformanceGrants grant the conformance plugin what its fixtures use,
// as interop/conformance.sh does.
const conformanceGrants = "plugin:\n  conformance:\n    grants:\n      log: true\n      notify: true\n"

// natsProc is a running nats-server.
type natsProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	exited chan struct{}
}

// startNATS runs nats-server with JetStream on port, storing in dir.
func startNATS(dir string, port int) (*natsProc, error) {
	if _, err := os.Stat(natsBin); err != nil {
		return nil, fmt.Errorf("%s missing: run interop/install-nats.sh (make test-cluster does)", natsBin)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	n := &natsProc{url: "nats://" + addr, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(natsBin, "-js", "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-sd", dir)
	n.cmd.Stdout, n.cmd.Stderr = n.stderr, n.stderr
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nats-server: %w", err)
	}
	go func() { _ = n.cmd.Wait(); close(n.exited) }()
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-n.exited:
			return nil, fmt.Errorf("nats-server exited:\n%s", tail(n.stderr.String(), 2000))
		default:
		}
		if strings.Contains(n.stderr.String(), "Server is ready") {
			return n, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.stop()
	return nil, fmt.Errorf("nats-server not ready:\n%s", tail(n.stderr.String(), 2000))
}

func (n *natsProc) stop() {
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(stopTimeout):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

// cluster is NATS, three replicas and the proxy in front of them.
type cluster struct {
	dir      string // the configuration and NATS's store
	natsPort int
	nats     *natsProc
	args     []string // every replica's serve arguments but --http
	replicas []*serverProc
	proxy    *serverProc
}

// startClusterT is startCluster for one test: it fails the test if the
// cluster does not start, and stops it when the test ends, logging the
// replicas' output if the test failed.
func startClusterT(t *testing.T, plugins, name, extra string) *cluster {
	t.Helper()
	c, err := startCluster(plugins, name, extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs:\n%s", c.logs())
		}
		c.stop()
	})
	return c
}

// startCluster starts a cluster named name serving the plugin directory
// plugins, with extra appended to the replicas' configuration.
func startCluster(plugins, name, extra string) (*cluster, error) {
	if _, err := os.Stat(rrBin); err != nil {
		return nil, fmt.Errorf("%s missing: run `go build -o bin/corral-rr ./cmd/corral-rr` (make test-cluster does)", rrBin)
	}
	dir, err := os.MkdirTemp("", "corral-cluster-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	if c.natsPort, err = freePort(); err != nil {
		return nil, err
	}
	if c.nats, err = startNATS(filepath.Join(dir, "nats"), c.natsPort); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "corral.yaml")
	yaml := fmt.Sprintf("keys:\n  secret: %q\ncluster:\n  nats: [%q]\n  name: %s\nhttp:\n  trustedProxies: [127.0.0.1/32]\nplugins:\n  cacheDir: %s\n%s",
		clusterSecret, c.nats.url, name, filepath.Join(repoRoot, "build", "cluster", "cache"), extra)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		c.stop()
		return nil, err
	}
	c.args = []string{"--config", cfg, "--plugins", plugins}
	var urls []string
	for i := range 3 {
		r, err := startHTTPServerEnv(replicaEnv(i), c.args...)
		if err != nil {
			c.stop()
			return nil, fmt.Errorf("replica %d: %w", i+1, err)
		}
		c.replicas = append(c.replicas, r)
		urls = append(urls, r.url)
	}
	if c.proxy, err = startProxy(urls); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// replicaEnv is the environment of replica i (from 0).
func replicaEnv(i int) []string { return []string{fmt.Sprintf("CORRAL_CLUSTER_REPLICA=r%d", i+1)} }

// restart starts replica i again on its address, after it stopped.
func (c *cluster) restart(i int) error {
	r, err := startHTTPServerAt(strings.TrimPrefix(c.replicas[i].url, "http://"), replicaEnv(i), c.args...)
	if err != nil {
		return fmt.Errorf("restart r%d: %w", i+1, err)
	}
	c.replicas[i] = r
	return nil
}

// restartNATS starts NATS again on its port and store, after it stopped.
func (c *cluster) restartNATS() error {
	n, err := startNATS(filepath.Join(c.dir, "nats"), c.natsPort)
	if err != nil {
		return err
	}
	c.nats = n
	return nil
}

// startProxy runs bin/corral-rr in front of urls on a free port.
func startProxy(urls []string) (*serverProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := &serverProc{url: "http://" + addr, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(rrBin, append([]string{"-listen", addr}, urls...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start corral-rr: %w", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	if err := p.waitReady(readyTimeout); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (c *cluster) stop() {
	if c.proxy != nil {
		c.proxy.stop()
	}
	for _, r := range c.replicas {
		r.stop()
	}
	if c.nats != nil {
		c.nats.stop()
	}
	os.RemoveAll(c.dir)
}

// logs are the cluster's logs, for a failed test.
func (c *cluster) logs() string {
	var b strings.Builder
	for i, r := range c.replicas {
		fmt.Fprintf(&b, "--- replica r%d:\n%s\n", i+1, tail(r.stderr.String(), 3000))
	}
	fmt.Fprintf(&b, "--- corral-rr:\n%s\n--- nats-server:\n%s", tail(c.proxy.stderr.String(), 1000), tail(c.nats.stderr.String(), 1000))
	return b.String()
}

// ownCluster starts a cluster for one test: the conformance plugin, the
// bench fixture granted notify and the kv fixture granted kv (kvQuota
// bytes), with pages of 10.
func ownCluster(t *testing.T) *cluster {
	t.Helper()
	if !clusterMode {
		t.Skip("the cluster tests run under make test-cluster (CORRAL_TEST_CLUSTER=1)")
	}
	if why := missingBuild(corralBin, conformanceWasm, fixtureWasm, kvWasm); why != "" {
		t.Fatal(why)
	}
	dir := t.TempDir()
	copyFile(t, conformanceWasm, filepath.Join(dir, "conformance.wasm"))
	copyFile(t, fixtureWasm, filepath.Join(dir, "bfx000.wasm"))
	copyFile(t, kvWasm, filepath.Join(dir, "kvstore.wasm"))
	return startClusterT(t, dir, "own", conformanceGrants+"  bfx000:\n    grants:\n      notify: true\n"+
		fmt.Sprintf("  kvstore:\n    grants:\n      kv: true\n      kvQuota: %d\ncatalog:\n  pageSize: 10\n", kvQuota))
}

// wire is a raw JSON-RPC client of the cluster's replicas.
type wire struct {
	t   *testing.T
	sid string // the 2025-11-25 session, once initialized
}

// wireMsg is one JSON-RPC message as a client reads it.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// post sends body to url (a replica or the proxy), with the headers hdr
// (name, value, ...), and returns the response, whose body the caller
// closes.
func (w *wire) post(url, body string, hdr ...string) *http.Response {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.sid != "" {
		req.Header.Set("Mcp-Session-Id", w.sid)
		req.Header.Set("MCP-Protocol-Version", era2025)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp
}

// call posts a request and returns its response message (the last of an
// event stream).
func (w *wire) call(url, body string, hdr ...string) wireMsg {
	w.t.Helper()
	resp := w.post(url, body, hdr...)
	defer resp.Body.Close()
	var last wireMsg
	for _, m := range readMessages(w.t, resp) {
		last = m
	}
	return last
}

// readMessages reads every message of a JSON or event-stream response.
func readMessages(t *testing.T, resp *http.Response) []wireMsg {
	t.Helper()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m wireMsg
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		return []wireMsg{m}
	}
	var out []wireMsg
	events := bufio.NewReader(resp.Body)
	for {
		m, err := nextMessage(events)
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

// nextMessage reads the next event's message of a stream.
func nextMessage(r *bufio.Reader) (wireMsg, error) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return wireMsg{}, err
		}
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var m wireMsg
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				return wireMsg{}, fmt.Errorf("%s: %w", data, err)
			}
			return m, nil
		}
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modernHeaders are the headers a 2026-07-28 request of method (on name,
// if not "") carries.
func modernHeaders(method, name string) []string {
	h := []string{"MCP-Protocol-Version", era2026, "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// TestClusterSession2025: one 2025-11-25 session with every request on
// the next replica (issue 14 item 5): initialize, initialized, a
// logging/setLevel, an input_required round trip whose elicitation/create
// comes from one replica and whose answer goes to another, a GET stream on
// one replica hearing an update subscribed through a second and caused on
// a third, then a DELETE, after which no replica knows the session and
// the GET stream has ended.
func TestClusterSession2025(t *testing.T) {
	c := ownCluster(t)
	r := func(i int) string { return c.replicas[i%3].url }
	w := &wire{t: t}
	resp := w.post(r(0), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"cluster","version":"1"}}}`)
	readMessages(t, resp)
	resp.Body.Close()
	if w.sid = resp.Header.Get("Mcp-Session-Id"); w.sid == "" {
		t.Fatal("initialize minted no session")
	}
	t.Logf("Mcp-Session-Id: %d bytes", len(w.sid))
	if resp := w.post(r(1), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized on r2: %d", resp.StatusCode)
	}
	if m := w.call(r(2), `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`); m.Error != nil {
		t.Fatalf("setLevel on r3: %+v", m.Error)
	}
	if m := w.call(r(3), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); m.Error != nil || !strings.Contains(string(m.Result), `"touch"`) {
		t.Fatalf("tools/list on r1: %s %+v", m.Result, m.Error)
	}

	// The round trip: the call held by r2, the answer posted to r3.
	call := w.post(r(4), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Who?"}}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	ask, err := nextMessage(events)
	if err != nil || ask.Method != "elicitation/create" {
		t.Fatalf("r2's first event: %+v %v, want elicitation/create", ask, err)
	}
	answer := w.post(r(5), `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"accept","content":{"username":"ann","email":"ann@example.com"}}}`)
	answer.Body.Close()
	if answer.StatusCode != http.StatusAccepted {
		t.Fatalf("the answer on r3: %d", answer.StatusCode)
	}
	final, err := nextMessage(events)
	if err != nil || final.Error != nil || !strings.Contains(string(final.Result), "ann") {
		t.Fatalf("tools/call on r2 after the answer on r3: %s %+v %v", final.Result, final.Error, err)
	}

	// The session's GET stream on r1 hears the update of a resource the
	// session subscribed to through r2, caused by a tool call on r3: the
	// subscription reaches r1 through the session store, the event
	// through the bus.
	greq, _ := http.NewRequest(http.MethodGet, r(0)+"/mcp", nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", w.sid)
	get, err := http.DefaultClient.Do(greq)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream on r1: %v %v", get, err)
	}
	defer get.Body.Close()
	if m := w.call(r(1), `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"bfx000://doc"}}`); m.Error != nil {
		t.Fatalf("subscribe on r2: %+v", m.Error)
	}
	stream := &listener{backend: -1, got: make(chan wireMsg, 64)}
	go func() {
		defer close(stream.got)
		events := bufio.NewReader(get.Body)
		for {
			m, err := nextMessage(events)
			if err != nil {
				return
			}
			stream.got <- m
		}
	}()
	modern := &wire{t: t}
	stream.expect(t, "notifications/resources/updated", 20*time.Second, func() {
		modern.call(r(2), `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{`+modernMeta+`,"name":"touch"}}`, modernHeaders("tools/call", "touch")...)
	})

	del, _ := http.NewRequest(http.MethodDelete, r(7)+"/mcp", nil)
	del.Header.Set("Mcp-Session-Id", w.sid)
	dresp, err := http.DefaultClient.Do(del)
	if err != nil || dresp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on r2: %v %v", dresp, err)
	}
	dresp.Body.Close()
	for i := range 3 {
		resp := w.post(r(i), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("r%d after the DELETE: %d, want 404", i+1, resp.StatusCode)
		}
	}
	stream.ended(t, 10*time.Second) // r1's GET stream, the session deleted through r2
}

// TestClusterListing: a listing started on one replica is finished on
// the others (the cursor is sealed under the shared secret and names the
// same plugin set generation everywhere), in both eras.
func TestClusterListing(t *testing.T) {
	c := ownCluster(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			w := &wire{t: t}
			meta := modernMeta
			if era == era2025 {
				resp := w.post(c.replicas[0].url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cluster","version":"1"}}}`)
				resp.Body.Close()
				w.sid = resp.Header.Get("Mcp-Session-Id")
				meta = ""
			}
			seen := map[string]bool{}
			cursor := ""
			for page := 0; ; page++ {
				var members []string
				if meta != "" {
					members = append(members, meta)
				}
				if cursor != "" {
					members = append(members, fmt.Sprintf(`"cursor":%q`, cursor))
				}
				params := "{" + strings.Join(members, ",")
				var hdr []string
				if era == era2026 {
					hdr = modernHeaders("resources/list", "")
				}
				m := w.call(c.replicas[page%3].url, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":`+params+`}}`, hdr...)
				if m.Error != nil {
					t.Fatalf("page %d on r%d: %+v", page, page%3+1, m.Error)
				}
				var res struct {
					Resources []struct {
						URI string `json:"uri"`
					} `json:"resources"`
					NextCursor string `json:"nextCursor"`
				}
				if err := json.Unmarshal(m.Result, &res); err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Resources {
					if seen[r.URI] {
						t.Errorf("%s listed twice", r.URI)
					}
					seen[r.URI] = true
				}
				if cursor = res.NextCursor; cursor == "" {
					if page < 3 {
						t.Errorf("the listing took %d pages; want one on every replica at least", page+1)
					}
					break
				}
			}
			if !seen["bfx000://doc"] || !seen["test://static-text"] || len(seen) < 100 {
				t.Errorf("listed %d resources, want the fixture's 100 and the conformance plugin's", len(seen))
			}
		})
	}
}

// TestClusterListen: a 2026-07-28 listen stream held by replica 1 hears
// the resource update and the list_changed that tool calls on replica 2
// caused (the events cross the NATS bus).
func TestClusterListen(t *testing.T) {
	c := ownCluster(t)
	w := &wire{t: t}
	listen := w.post(c.replicas[0].url, `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["bfx000://doc"]}}}`,
		modernHeaders("subscriptions/listen", "")...)
	defer listen.Body.Close()
	events := bufio.NewReader(listen.Body)
	if ack, err := nextMessage(events); err != nil || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen on r1: %+v %v", ack, err)
	}
	got := make(chan wireMsg, 8)
	go func() {
		for {
			m, err := nextMessage(events)
			if err != nil {
				close(got)
				return
			}
			got <- m
		}
	}()
	for _, tt := range []struct{ tool, want string }{
		{"touch", "notifications/resources/updated"},
		{"test_trigger_tool_change", "notifications/tools/list_changed"},
	} {
		if m := w.call(c.replicas[1].url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+modernMeta+`,"name":"`+tt.tool+`"}}`,
			modernHeaders("tools/call", tt.tool)...); m.Error != nil {
			t.Fatalf("%s on r2: %+v", tt.tool, m.Error)
		}
		select {
		case m, ok := <-got:
			if !ok || m.Method != tt.want {
				t.Fatalf("r1's stream after %s on r2: %+v, want %s", tt.tool, m, tt.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("r1's stream heard nothing of %s on r2", tt.tool)
		}
	}
}

// TestClusterConformance: the official conformance suite, both eras,
// through the proxy in front of the shared cluster, against the same
// baseline as one process (interop/conformance.sh --url), the tasks
// scenarios included: each of their requests may land on another replica
// than the one running the task. server/discover through the proxy
// advertises the tasks extension.
func TestClusterConformance(t *testing.T) {
	if !clusterMode {
		t.Skip("the cluster tests run under make test-cluster (CORRAL_TEST_CLUSTER=1)")
	}
	srv := sharedConformanceServer(t)
	w := &wire{t: t}
	d := w.call(srv.url, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`, modernHeaders("server/discover", "")...)
	if d.Error != nil || len(d.Result) == 0 {
		t.Fatalf("server/discover through the proxy: %+v", d)
	}
	if !strings.Contains(string(d.Result), "io.modelcontextprotocol/tasks") {
		t.Errorf("a cluster replica does not advertise the tasks extension: %s", d.Result)
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot, "interop", "conformance.sh"), "--url", srv.url+"/mcp").CombinedOutput()
	t.Logf("conformance.sh --url %s/mcp:\n%s", srv.url, tail(string(out), 3000))
	if err != nil {
		t.Errorf("conformance through the proxy: %v\n%s", err, shared.cluster.logs())
	}
}

// TestClusterKV: a kv value written through replica 1 is read through
// replica 3 (the store is a JetStream bucket, not a replica's file), and
// the store's quota holds across replicas: a second value that would take
// it over, written through replica 2, is refused.
func TestClusterKV(t *testing.T) {
	c := ownCluster(t)
	w := &wire{t: t}
	tool := func(r int, name, arguments string) (string, bool) {
		t.Helper()
		m := w.call(c.replicas[r].url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modernMeta+`,"name":"`+name+`","arguments":`+arguments+`}}`,
			modernHeaders("tools/call", name)...)
		if m.Error != nil {
			t.Fatalf("%s on r%d: %+v", name, r+1, m.Error)
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("%s on r%d: %s %v", name, r+1, m.Result, err)
		}
		return res.Content[0].Text, res.IsError
	}
	big := strings.Repeat("x", kvQuota*6/10)
	if text, failed := tool(0, "kv_set", `{"key":"a","value":"`+big+`"}`); failed {
		t.Fatalf("kv_set a on r1: %s", text)
	}
	if text, failed := tool(2, "kv_get", `{"key":"a"}`); failed || text != big {
		t.Errorf("kv_get a on r3: %.80s (error %v), want the value written on r1", text, failed)
	}
	if text, failed := tool(1, "kv_set", `{"key":"b","value":"`+big+`"}`); !failed {
		t.Errorf("kv_set b on r2 took the store over its %d-byte quota: %s", kvQuota, text)
	}
	if text, failed := tool(2, "kv_get", `{"key":"b"}`); !failed {
		t.Errorf("kv_get b on r3 after the refused set: %.80s", text)
	}
}
