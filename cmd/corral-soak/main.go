// Command corral-soak runs bin/corral over loopback HTTP for a bounded time
// with several principals, a policy and the bundled plugins, mixing lists,
// reads, prompts, completions, tool calls, 2025 sessions, listen streams
// and plugin reloads, and checks that no response is lost or misrouted,
// that no principal is ever shown what its policy (or the issues plugin's
// per-group visibility) hides, and that the server's heap stays flat. It
// prints its counts and exits 1 on any violation (`make soak`).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Markers only private answers contain.
const (
	secretIssueMarker = "ZEBRA-SECRET" // issue 2, visible to group secret-team
	staffFileMarker   = "STAFF-ONLY"   // files/staff/plan.txt, visible to group staff
	protocol          = "2026-07-28"
)

// principal is one soak user and what it may see.
type principal struct {
	id, token string
	groups    []string
	secret    bool // in secret-team: sees issue 2
	staff     bool // policy: everything
	files     bool // policy: public files

	c counts
}

type counts struct {
	requests, ok, hidden, limited, violations, lost, reloadMisses atomic.Int64
	notifications                                                 atomic.Int64
}

func main() {
	os.Exit(run())
}

func run() int {
	bin := flag.String("bin", "bin/corral", "corral `binary` to soak")
	plugins := flag.String("plugins", "build/plugins", "`dir`ectory holding issues.wasm, files.wasm and conformance.wasm")
	duration := flag.Duration("duration", 10*time.Minute, "how long to soak")
	workers := flag.Int("workers", 3, "concurrent workers per principal")
	reload := flag.Duration("reload", 5*time.Second, "interval between plugin reloads (remove, then re-add conformance.wasm)")
	sample := flag.Duration("sample", 5*time.Second, "interval between heap samples")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := setup(ctx, *bin, *plugins, log)
	if err != nil {
		log.Error("soak: setup", "err", err)
		return 1
	}
	defer s.close()

	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range s.principals {
		for w := range *workers {
			wg.Add(1)
			go func() { defer wg.Done(); s.worker(runCtx, p, w) }()
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.listener(runCtx, p) }()
	}
	var reloads atomic.Int64
	wg.Add(1)
	go func() { defer wg.Done(); s.reloader(runCtx, *reload, &reloads) }()
	heap := s.sampler(runCtx, *sample)
	start := time.Now()
	wg.Wait()
	samples := <-heap
	return s.report(time.Since(start), reloads.Load(), samples)
}

// soak is the running server and its principals.
type soak struct {
	log        *slog.Logger
	dir        string
	url        string
	admin      string // the admin listener, where /metrics is
	cmd        *exec.Cmd
	client     *http.Client
	principals []*principal
	confWasm   []byte
	pluginDir  string
	filesDir   string
	seq        atomic.Int64
	violations sync.Map // description -> count, for the report
}

func setup(ctx context.Context, bin, plugins string, log *slog.Logger) (*soak, error) {
	dir, err := os.MkdirTemp("", "corral-soak-")
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	s := &soak{log: log, dir: dir, pluginDir: filepath.Join(dir, "plugins"), filesDir: filepath.Join(dir, "files"),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for _, d := range []string{s.pluginDir, filepath.Join(s.filesDir, "staff"), filepath.Join(dir, "issues")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("soak: %w", err)
		}
	}
	for _, name := range []string{"issues", "files", "conformance"} {
		b, err := os.ReadFile(filepath.Join(plugins, name+".wasm"))
		if err != nil {
			return nil, fmt.Errorf("soak: %w (run make plugins)", err)
		}
		if name == "conformance" {
			s.confWasm = b
		}
		if err := os.WriteFile(filepath.Join(s.pluginDir, name+".wasm"), b, 0o644); err != nil {
			return nil, fmt.Errorf("soak: %w", err)
		}
	}
	files := map[string]string{
		filepath.Join(s.filesDir, "public.txt"):        "public notes\n",
		filepath.Join(s.filesDir, "staff", "plan.txt"): "the plan: " + staffFileMarker + "\n",
		filepath.Join(dir, "issues", "issues.json"):    issuesJSON,
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return nil, fmt.Errorf("soak: %w", err)
		}
	}
	s.principals = []*principal{
		{id: "alice", groups: []string{"staff", "secret-team"}, secret: true, staff: true, files: true},
		{id: "dave", groups: []string{"staff"}, staff: true, files: true},
		{id: "bob", groups: []string{"dev"}, files: true},
		{id: "carol", groups: []string{"guest"}},
	}
	var tokens strings.Builder
	for _, p := range s.principals {
		p.token = fmt.Sprintf("soak-token-%s-%d", p.id, rand.Int64())
		sum := sha256.Sum256([]byte(p.token))
		fmt.Fprintf(&tokens, "    - {sha256: %s, principal: %s, groups: [%s]}\n", hex.EncodeToString(sum[:]), p.id, strings.Join(p.groups, ", "))
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	adminPort, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`http: {addr: "127.0.0.1:%d"}
admin: {addr: "127.0.0.1:%d"}
log: {level: warn}
plugins: {dir: %q, debounce: 50ms, rescan: 1s}
auth:
  completionRate: 200
  completionBurst: 200
  tokens:
%spolicy:
  - groups: [staff]
  - principals: [bob]
    plugins: [issues, files]
    resources: ["issues://*", "repo://*", "file://%s/public*"]
  - principals: [carol]
    plugins: [issues]
    tools: ["!"]
plugin:
  issues: {grants: {files: [%q], config: {data: issues.json}}}
  files: {grants: {files: [%q]}}
  conformance: {grants: {log: true, notify: true}}
`, port, adminPort, s.pluginDir, tokens.String(), filepath.ToSlash(s.filesDir), filepath.Join(dir, "issues"), s.filesDir)
	cfgFile := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	s.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	s.admin = fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	s.cmd = exec.CommandContext(ctx, bin, "serve", "--config", cfgFile)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("soak: start %s: %w", bin, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(s.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			s.close()
			return nil, fmt.Errorf("soak: server not ready after 60s (log: %s)", logf.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
	log.Info("soak: serving", "url", s.url, "dir", dir)
	return s, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("soak: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *soak) close() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
		}
	}
	os.RemoveAll(s.dir)
}

// violation records a broken promise.
func (s *soak) violation(p *principal, what string, detail any) {
	p.c.violations.Add(1)
	v, _ := s.violations.LoadOrStore(p.id+": "+what, new(atomic.Int64))
	if v.(*atomic.Int64).Add(1) == 1 {
		s.log.Error("soak: VIOLATION", "principal", p.id, "what", what, "detail", fmt.Sprint(detail))
	}
}

// response is a decoded JSON-RPC response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call posts one modern request and checks the answer carries its id.
// It returns nil when the response was lost (counted).
func (s *soak) call(ctx context.Context, p *principal, method string, params map[string]any) *response {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    protocol,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	id := fmt.Sprintf("%s-%d", p.id, s.seq.Add(1))
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	hdr := map[string]string{"MCP-Protocol-Version": protocol, "Mcp-Method": method}
	if n, ok := params["name"].(string); ok {
		hdr["Mcp-Name"] = n
	}
	if u, ok := params["uri"].(string); ok && method == "resources/read" {
		hdr["Mcp-Name"] = u
	}
	p.c.requests.Add(1)
	status, raw, err := s.post(ctx, p, body, hdr, "")
	if err != nil {
		if ctx.Err() == nil {
			p.c.lost.Add(1)
			s.violation(p, "lost response to "+method, err)
		}
		return nil
	}
	var r response
	if json.Unmarshal(raw, &r) != nil {
		p.c.lost.Add(1)
		s.violation(p, "undecodable response to "+method, string(raw))
		return nil
	}
	if string(r.ID) != strconv.Quote(id) {
		s.violation(p, "misrouted response to "+method, fmt.Sprintf("sent id %s, got %s", id, r.ID))
		return nil
	}
	if status == http.StatusTooManyRequests || (r.Error != nil && r.Error.Code == -31429) {
		p.c.limited.Add(1)
	}
	if !p.secret && bytes.Contains(raw, []byte(secretIssueMarker)) {
		s.violation(p, "saw the secret issue via "+method, string(raw))
	}
	if !p.staff && bytes.Contains(raw, []byte(staffFileMarker)) {
		s.violation(p, "saw the staff file via "+method, string(raw))
	}
	return &r
}

func (s *soak) post(ctx context.Context, p *principal, body []byte, hdr map[string]string, session string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp", bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("soak: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+p.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("soak: post: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("soak: read: %w", err)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the last data line of the stream.
		var last []byte
		for line := range bytes.SplitSeq(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				last = d
			}
		}
		raw = last
	}
	if session == "" && len(raw) == 0 {
		return res.StatusCode, nil, fmt.Errorf("soak: empty response (HTTP %d)", res.StatusCode)
	}
	return res.StatusCode, raw, nil
}

// seesURI is the oracle: may p see uri?
func (p *principal) seesURI(uri, filesDir string) bool {
	if isSecretIssue(uri) && !p.secret {
		return false
	}
	switch {
	case strings.HasPrefix(uri, "issues://"), strings.HasPrefix(uri, "repo://"):
		return true
	case strings.HasPrefix(uri, "file://"):
		return p.staff || (p.files && strings.HasPrefix(uri, "file://"+filepath.ToSlash(filesDir)+"/public"))
	}
	return p.staff
}

func isSecretIssue(uri string) bool {
	return uri == "issues://2" || strings.HasPrefix(uri, "issues://2/") || strings.HasSuffix(uri, "/issues/2")
}

// ops are the soak's requests, picked at random by weight.
var ops = []struct {
	name   string
	weight int
}{
	{"list", 4}, {"read-public", 6}, {"read-secret", 4}, {"read-staff-file", 2}, {"read-conformance", 2},
	{"complete", 4}, {"prompt", 2}, {"search", 2}, {"legacy-session", 1},
}

func (s *soak) worker(ctx context.Context, p *principal, n int) {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(p.id))))
	for ctx.Err() == nil {
		k := rng.IntN(total)
		op := ops[0].name
		for _, o := range ops {
			if k < o.weight {
				op = o.name
				break
			}
			k -= o.weight
		}
		s.do(ctx, p, op)
	}
}

func (s *soak) do(ctx context.Context, p *principal, op string) {
	switch op {
	case "list":
		s.list(ctx, p)
	case "read-public":
		s.read(ctx, p, "issues://1", true)
	case "read-secret":
		s.read(ctx, p, "issues://2", p.secret)
	case "read-staff-file":
		s.read(ctx, p, "file://"+filepath.ToSlash(s.filesDir)+"/staff/plan.txt", p.staff)
	case "read-conformance":
		s.read(ctx, p, "test://static-text", p.staff)
	case "complete":
		r := s.call(ctx, p, "completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "issues://{number}"}, "argument": map[string]any{"name": "number", "value": ""}})
		if r == nil {
			return
		}
		if r.Error != nil {
			if r.Error.Code != -31429 {
				s.violation(p, "completion failed", r.Error.Message)
			}
			return
		}
		var res struct {
			Completion struct{ Values []string } `json:"completion"`
		}
		json.Unmarshal(r.Result, &res)
		if has := slices.Contains(res.Completion.Values, "2"); has != p.secret {
			s.violation(p, "completion of issue numbers", res.Completion.Values)
			return
		}
		p.c.ok.Add(1)
	case "prompt":
		r := s.call(ctx, p, "prompts/get", map[string]any{"name": "triage_issue", "arguments": map[string]string{"issue_id": "1"}})
		s.expect(p, r, true, "prompt")
	case "search":
		r := s.call(ctx, p, "tools/call", map[string]any{"name": "search_issues", "arguments": map[string]string{"query": "zebra", "state": "all"}})
		// carol's policy hides every tool; everyone else may search, and
		// the secret issue only appears for secret-team (checked in call).
		s.expect(p, r, p.id != "carol", "search")
	case "legacy-session":
		s.legacy(ctx, p)
	}
}

// expect checks a response succeeded (or, when !allowed, was refused like
// a missing thing).
func (s *soak) expect(p *principal, r *response, allowed bool, what string) {
	switch {
	case r == nil:
	case allowed && r.Error == nil:
		p.c.ok.Add(1)
	case !allowed && r.Error != nil && r.Error.Code == -32602:
		p.c.hidden.Add(1)
	default:
		s.violation(p, what+" answered unexpectedly", fmt.Sprintf("allowed=%v result=%s error=%v", allowed, r.Result, r.Error))
	}
}

func (s *soak) read(ctx context.Context, p *principal, uri string, allowed bool) {
	r := s.call(ctx, p, "resources/read", map[string]any{"uri": uri})
	if r == nil {
		return
	}
	if r.Error == nil {
		var res struct {
			Contents []struct {
				URI string `json:"uri"`
			} `json:"contents"`
			CacheScope string `json:"cacheScope"`
		}
		json.Unmarshal(r.Result, &res)
		if len(res.Contents) == 0 || res.Contents[0].URI != uri {
			s.violation(p, "read answered for another URI", string(r.Result))
			return
		}
		if res.CacheScope != "private" {
			s.violation(p, "read not private", res.CacheScope)
		}
	}
	if uri == "test://static-text" && allowed && r.Error != nil {
		p.c.reloadMisses.Add(1) // the conformance plugin is being reloaded
		return
	}
	s.expect(p, r, allowed, "read "+uri)
}

func (s *soak) list(ctx context.Context, p *principal) {
	cursor := ""
	var uris []string
	for range 50 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r := s.call(ctx, p, "resources/list", params)
		if r == nil {
			return
		}
		if r.Error != nil {
			if r.Error.Code == -32602 && cursor != "" {
				p.c.reloadMisses.Add(1) // the plugin set changed under the cursor
				return
			}
			s.violation(p, "list failed", r.Error.Message)
			return
		}
		var res struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
			NextCursor *string `json:"nextCursor"`
			CacheScope string  `json:"cacheScope"`
		}
		json.Unmarshal(r.Result, &res)
		if res.CacheScope != "private" {
			s.violation(p, "list not private", res.CacheScope)
		}
		for _, it := range res.Resources {
			uris = append(uris, it.URI)
			if !p.seesURI(it.URI, s.filesDir) {
				s.violation(p, "listed a hidden resource", it.URI)
			}
		}
		if res.NextCursor == nil {
			break
		}
		cursor = *res.NextCursor
	}
	if slices.Contains(uris, "issues://2") != p.secret {
		s.violation(p, "issue 2 listed (or not) against its visibility", p.secret)
		return
	}
	p.c.ok.Add(1)
}

// legacy opens a 2025 session, lists tools in it and ends it.
func (s *soak) legacy(ctx context.Context, p *principal) {
	p.c.requests.Add(1)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp", bytes.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+p.token)
	res, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			p.c.lost.Add(1)
			s.violation(p, "lost initialize", err)
		}
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	sid := res.Header.Get("Mcp-Session-Id")
	if sid == "" {
		s.violation(p, "initialize gave no session", res.StatusCode)
		return
	}
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	s.post(ctx, p, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr, sid)
	id := s.seq.Add(1)
	_, raw, err := s.post(ctx, p, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id), hdr, sid)
	var r response
	switch {
	case err != nil:
		if ctx.Err() == nil {
			p.c.lost.Add(1)
			s.violation(p, "lost legacy tools/list", err)
		}
		return
	case json.Unmarshal(raw, &r) != nil || string(r.ID) != strconv.FormatInt(id, 10):
		s.violation(p, "misrouted legacy response", string(raw))
		return
	case p.id == "carol" && bytes.Contains(r.Result, []byte(`"name"`)):
		s.violation(p, "carol sees tools", string(r.Result))
	}
	del, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.url+"/mcp", nil)
	del.Header.Set("Authorization", "Bearer "+p.token)
	del.Header.Set("Mcp-Session-Id", sid)
	if res, err := s.client.Do(del); err == nil {
		res.Body.Close()
	}
	p.c.ok.Add(1)
}

// listener keeps a listen stream open, reopening it when it ends, and
// counts its notifications; the acknowledgement must come first.
func (s *soak) listener(ctx context.Context, p *principal) {
	for ctx.Err() == nil {
		params := map[string]any{
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    protocol,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			},
			"notifications": map[string]any{"toolsListChanged": true, "resourcesListChanged": true,
				"resourceSubscriptions": []string{"issues://1", "issues://2"}},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-" + p.id, "method": "subscriptions/listen", "params": params})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+p.token)
		req.Header.Set("MCP-Protocol-Version", protocol)
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		res, err := (&http.Client{}).Do(req)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(time.Second)
			}
			continue
		}
		sc := bufio.NewScanner(res.Body)
		first := true
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if first && !strings.Contains(line, "notifications/subscriptions/acknowledged") {
				s.violation(p, "listen stream did not start with its acknowledgement", line)
			}
			if !first {
				p.c.notifications.Add(1)
			}
			if !p.secret && strings.Contains(line, `"issues://2"`) && !first {
				s.violation(p, "notified about the secret issue", line)
			}
			first = false
		}
		res.Body.Close()
	}
}

// reloader removes conformance.wasm and puts it back, alternately.
func (s *soak) reloader(ctx context.Context, every time.Duration, n *atomic.Int64) {
	t := time.NewTicker(every)
	defer t.Stop()
	path := filepath.Join(s.pluginDir, "conformance.wasm")
	present := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		if present {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, s.confWasm, 0o644)
		}
		if err != nil {
			s.log.Error("soak: reload", "err", err)
			continue
		}
		present = !present
		n.Add(1)
	}
}

// sampler reads the server's heap in use from the admin listener's
// /metrics every interval and sends every sample when ctx ends.
func (s *soak) sampler(ctx context.Context, every time.Duration) <-chan []float64 {
	out := make(chan []float64, 1)
	go func() {
		var samples []float64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				out <- samples
				return
			case <-t.C:
			}
			if v, err := s.heapInuse(); err == nil {
				samples = append(samples, v)
			}
		}
	}()
	return out
}

func (s *soak) heapInuse() (float64, error) {
	res, err := s.client.Get(s.admin + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("soak: metrics: %w", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, errors.New("soak: no go_memstats_heap_inuse_bytes in /metrics")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// report prints the counts and judges the run.
func (s *soak) report(d time.Duration, reloads int64, heap []float64) int {
	fmt.Printf("soak: %s, %d plugin reloads\n", d.Round(time.Second), reloads)
	fmt.Printf("%-8s %10s %10s %10s %10s %12s %8s %8s %12s\n", "who", "requests", "ok", "hidden", "limited", "reload-miss", "lost", "bad", "notified")
	var total, bad, lost int64
	for _, p := range s.principals {
		c := &p.c
		fmt.Printf("%-8s %10d %10d %10d %10d %12d %8d %8d %12d\n", p.id, c.requests.Load(), c.ok.Load(), c.hidden.Load(),
			c.limited.Load(), c.reloadMisses.Load(), c.lost.Load(), c.violations.Load(), c.notifications.Load())
		total += c.requests.Load()
		bad += c.violations.Load()
		lost += c.lost.Load()
	}
	fmt.Printf("total: %d requests, %.0f/s, %d lost, %d violations\n", total, float64(total)/d.Seconds(), lost, bad)
	s.violations.Range(func(k, v any) bool {
		fmt.Printf("  violation: %s (×%d)\n", k, v.(*atomic.Int64).Load())
		return true
	})
	code := 0
	if bad > 0 || lost > 0 {
		code = 1
	}
	if total == 0 {
		fmt.Println("FAIL: no request was made")
		return 1
	}
	// Flat memory: after a warm-up (the first fifth of the samples), the
	// median heap of the last quarter is within 25% (plus 16 MiB of
	// slack) of the median of the warm second fifth.
	if n := len(heap); n >= 10 {
		early := median(heap[n/5 : 2*n/5])
		late := median(heap[3*n/4:])
		fmt.Printf("heap in use: early median %.1f MiB, late median %.1f MiB (%d samples)\n", early/(1<<20), late/(1<<20), n)
		if late > early*1.25+16<<20 {
			fmt.Println("FAIL: the heap grew")
			code = 1
		}
	} else {
		fmt.Printf("heap in use: %d samples, too few to judge flatness (run longer)\n", n)
	}
	if code == 0 {
		fmt.Println("PASS: no response lost or misrouted, nothing shown to the wrong principal")
	} else {
		fmt.Println("FAIL")
	}
	return code
}

// issuesJSON is the soak's tracker: issue 2 is private to secret-team.
const issuesJSON = `{"triageGuide":"# Triage\n\nBe kind.\n","areas":["api","ui"],"issues":[
{"number":1,"owner":"acme","repo":"rocket","title":"Public bug about zebra stripes","body":"A public issue.","state":"open","author":"dana","labels":["bug"],"area":"ui","priority":"low","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},
{"number":2,"owner":"acme","repo":"rocket","title":"` + secretIssueMarker + ` zebra vulnerability","body":"Private: ` + secretIssueMarker + `.","state":"open","author":"eve","labels":["bug"],"area":"api","priority":"critical","createdAt":"2026-01-02T00:00:00Z","updatedAt":"2026-01-02T00:00:00Z","visibleTo":["secret-team"]},
{"number":3,"owner":"acme","repo":"rocket","title":"Docs typo","body":"Another public issue.","state":"closed","author":"finn","labels":["docs"],"area":"ui","priority":"low","createdAt":"2026-01-03T00:00:00Z","updatedAt":"2026-01-03T00:00:00Z"}]}`
