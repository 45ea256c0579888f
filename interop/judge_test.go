package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envJudgeWasm lists the example providers TestJudge judges.
const envJudgeWasm = "JUDGE_WASM"

// The judge's fixture: what the configuration grants the example and what
// the probe must report back (docs/plugins.md §2).
const (
	judgeMotto    = `Small is "beautiful" ✓`
	judgeFile     = "notes.txt"
	judgeFileText = "plain text, ünïcode ✓"
	judgeSibling  = "a-first.txt"
	judgeHTTPBody = "pong"
	judgeName     = `Ada "Countess" Lovelace\ ✓`
	readmeText    = "The corral example provider — one provider, four languages."
)

// TestJudge serves each example provider named in JUDGE_WASM (comma-separated
// paths) through the real bin/corral over Streamable HTTP and checks the
// behaviour docs/plugins.md §2 fixes, with the official Go SDK client: the
// lists, every read, completion, prompt and tool, the kv counter, the
// notification a subscribed session hears, the elicitation of reset, and the
// progress and log line of probe. The same provider in every language must
// pass the same checks; CORRAL_PLUGINS_ENGINE=wasmtime (make test-wasmtime)
// judges it on wasmtime.
func TestJudge(t *testing.T) {
	list := os.Getenv(envJudgeWasm)
	if list == "" {
		t.Skipf("%s is unset: `make judge` judges the examples, or %s=/abs/path/x.wasm go test -run '^TestJudge$' .", envJudgeWasm, envJudgeWasm)
	}
	if why := missingBuild(corralBin); why != "" {
		t.Fatal(why)
	}
	for _, wasm := range strings.Split(list, ",") {
		wasm = strings.TrimSpace(wasm)
		t.Run(strings.TrimSuffix(filepath.Base(wasm), ".wasm"), func(t *testing.T) {
			if _, err := os.Stat(wasm); err != nil {
				t.Fatalf("%s: %v (make examples builds them)", envJudgeWasm, err)
			}
			judgeWasm(t, wasm)
		})
	}
}

// judgeWasm serves wasm and runs every check of the judge on it, each as a
// subtest. TestScaffold judges scaffolded projects with it too.
func judgeWasm(t *testing.T, wasm string) {
	j := newJudge(t, wasm)
	for _, era := range eras {
		t.Run(era+"/stateless", func(t *testing.T) { j.stateless(t, j.connect(t, era)) })
	}
	cs := j.connect(t, era2025)
	t.Run("counter", func(t *testing.T) { cs = j.counter(t, cs) })
	t.Run(era2026+"/notify", func(t *testing.T) {
		cs := j.connect(t, era2026)
		j.hear(t, cs, func() {
			if text, isErr := callText(t, cs, "increment", map[string]any{}, nil); isErr || !strings.HasPrefix(text, "count: ") {
				t.Fatalf("increment = %q (isError %v), want count: N", text, isErr)
			}
		})
	})
	t.Run("probe", func(t *testing.T) { j.probe(t, cs) })
	t.Run(era2026+"/probe as a task", j.probeTask)
}

// judge is one example provider served by corral, and what its client heard.
type judge struct {
	tb       testing.TB // the test that owns the server and its sessions
	cfgPath  string
	srv      *serverProc
	root     string // the granted files root
	fetchURL string // the loopback page probe fetches

	mu        sync.Mutex
	updated   []string                          // URIs of notifications/resources/updated
	progress  []mcp.ProgressNotificationParams  // notifications/progress
	elicited  []*mcp.ElicitParams               // elicitation/create requests
	answer    func() (*mcp.ElicitResult, error) // how the client answers them
	heardNote chan struct{}                     // signalled on each update
}

func newJudge(t testing.TB, wasm string) *judge {
	t.Helper()
	base := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"plugins", "data", "root"} {
		dirs[d] = filepath.Join(base, d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, wasm, filepath.Join(dirs["plugins"], filepath.Base(wasm)))
	for name, text := range map[string]string{judgeFile: judgeFileText, judgeSibling: "x"} {
		if err := os.WriteFile(filepath.Join(dirs["root"], name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(judgeHTTPBody))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = page.Serve(ln) }()
	t.Cleanup(func() { _ = page.Close() })

	motto, _ := json.Marshal(judgeMotto)
	// completionRate 0: BenchmarkJudge completes in a loop.
	cfg := fmt.Sprintf(`auth:
  completionRate: 0
plugins:
  dir: %q
  dataDir: %q
  cacheDir: %q
plugin:
  example:
    grants:
      kv: true
      notify: true
      log: true
      files: [%q]
      http:
        hosts: [%q]
        allowPrivate: true
      config:
        motto: %s
`, dirs["plugins"], dirs["data"], notifyCacheDir(t), dirs["root"], ln.Addr().String(), motto)
	cfgPath := filepath.Join(base, "corral.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// `corral plugin check` first: a module that does not load fails here
	// with the host's one-line cause and fix, not as a list of missing
	// resources.
	check := exec.Command(corralBin, "plugin", "check", "--config", cfgPath, filepath.Join(dirs["plugins"], filepath.Base(wasm)))
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("corral plugin check %s: %v\n%s", filepath.Base(wasm), err, out)
	}
	return &judge{
		tb:        t,
		cfgPath:   cfgPath,
		srv:       startedHTTPServer(t, "--config", cfgPath),
		root:      dirs["root"],
		fetchURL:  "http://" + ln.Addr().String() + "/ping",
		heardNote: make(chan struct{}, 64),
	}
}

// connect opens a Go SDK client session on era, with the handlers that
// record what the server sends the client.
func (j *judge) connect(t testing.TB, era string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "corral-judge", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			j.mu.Lock()
			j.updated = append(j.updated, r.Params.URI)
			j.mu.Unlock()
			select {
			case j.heardNote <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			j.mu.Lock()
			j.progress = append(j.progress, *r.Params)
			j.mu.Unlock()
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			j.mu.Lock()
			j.elicited = append(j.elicited, r.Params)
			answer := j.answer
			j.mu.Unlock()
			if answer == nil {
				return nil, errors.New("the judge did not expect an elicitation")
			}
			return answer()
		},
	})
	cs, err := c.Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: j.srv.url + "/mcp", MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect (%s): %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// stateless checks what does not depend on earlier calls: the lists, the
// reads of the readme and the greetings, completion, the prompt and shout.
func (j *judge) stateless(t *testing.T, cs *mcp.ClientSession) {
	ctx := testContext(t)
	notFound := int64(-32002)
	if cs.InitializeResult().ProtocolVersion != era2025 {
		notFound = -32602
	}

	t.Run("lists", func(t *testing.T) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI+" "+r.Name+" "+r.MIMEType)
		}
		if diff := cmp.Diff([]string{"example://readme readme text/plain", "example://counter counter text/plain"}, got); diff != "" {
			t.Errorf("resources/list (-want +got):\n%s", diff)
		}
		tm, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tm.ResourceTemplates) != 1 || tm.ResourceTemplates[0].URITemplate != "example://greetings/{lang}" || tm.ResourceTemplates[0].Name != "greeting" {
			t.Errorf("resources/templates/list = %s, want the one template example://greetings/{lang}", marshal(tm.ResourceTemplates))
		}
		pr, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantPrompt := `[{"arguments":[{"name":"name","required":true},{"name":"lang"}],"description":"Greet someone","name":"greet"}]`
		if got := marshal(pr.Prompts); got != wantPrompt {
			t.Errorf("prompts/list = %s, want %s", got, wantPrompt)
		}
		tl, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]string{}
		for _, tool := range tl.Tools {
			tools[tool.Name] = marshal(tool.InputSchema)
		}
		wantTools := map[string]string{
			"shout":     `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`,
			"increment": `{"properties":{},"type":"object"}`,
			"reset":     `{"properties":{},"type":"object"}`,
			"probe":     `{"properties":{"path":{"type":"string"},"url":{"type":"string"}},"required":["path","url"],"type":"object"}`,
		}
		if diff := cmp.Diff(wantTools, tools); diff != "" {
			t.Errorf("tools/list input schemas (-want +got):\n%s", diff)
		}
	})

	t.Run("read", func(t *testing.T) {
		tests := []struct{ uri, text string }{
			{"example://readme", readmeText},
			{"example://greetings/de", "Hallo"},
			{"example://greetings/en", "Hello"},
			{"example://greetings/es", "Hola"},
			{"example://greetings/fr", "Bonjour"},
			{"example://greetings/it", "Ciao"},
		}
		for _, tt := range tests {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
			if err != nil {
				t.Errorf("read %s: %v", tt.uri, err)
				continue
			}
			want := []*mcp.ResourceContents{{URI: tt.uri, MIMEType: "text/plain", Text: tt.text}}
			if diff := cmp.Diff(want, res.Contents); diff != "" {
				t.Errorf("read %s (-want +got):\n%s", tt.uri, diff)
			}
		}
		for _, uri := range []string{"example://greetings/xx", "example://nothing"} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if code := rpcCode(err); code != notFound {
				t.Errorf("read %s: %v (code %d), want resource not found (%d)", uri, err, code, notFound)
			}
		}
	})

	t.Run("complete", func(t *testing.T) {
		tests := []struct {
			ref   mcp.CompleteReference
			value string
			want  []string
		}{
			{mcp.CompleteReference{Type: "ref/resource", URI: "example://greetings/{lang}"}, "", []string{"de", "en", "es", "fr", "it"}},
			{mcp.CompleteReference{Type: "ref/resource", URI: "example://greetings/{lang}"}, "e", []string{"en", "es"}},
			{mcp.CompleteReference{Type: "ref/resource", URI: "example://greetings/{lang}"}, "x", []string{}},
			{mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "f", []string{"fr"}},
			{mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "", []string{"de", "en", "es", "fr", "it"}},
		}
		for _, tt := range tests {
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &tt.ref, Argument: mcp.CompleteParamsArgument{Name: "lang", Value: tt.value}})
			if err != nil {
				t.Errorf("complete %s lang=%q: %v", tt.ref.Type, tt.value, err)
				continue
			}
			c := res.Completion
			if !slices.Equal(c.Values, tt.want) || c.Total != len(tt.want) || c.HasMore {
				t.Errorf("complete %s lang=%q = %s, want values %q, total %d, no more", tt.ref.Type, tt.value, marshal(c), tt.want, len(tt.want))
			}
		}
	})

	t.Run("prompt", func(t *testing.T) {
		tests := []struct{ lang, code, greeting string }{{"fr", "fr", "Bonjour"}, {"", "en", "Hello"}}
		for _, tt := range tests {
			args := map[string]string{"name": judgeName}
			if tt.lang != "" {
				args["lang"] = tt.lang
			}
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args})
			if err != nil {
				t.Errorf("greet lang=%q: %v", tt.lang, err)
				continue
			}
			want := `[{"content":{"type":"text","text":"Say ` + tt.greeting + ` to Ada \"Countess\" Lovelace\\ ✓."},"role":"user"},` +
				`{"content":{"type":"resource","resource":{"uri":"example://greetings/` + tt.code + `","mimeType":"text/plain","text":"` + tt.greeting + `"}},"role":"user"}]`
			if got := marshal(res.Messages); got != want {
				t.Errorf("greet lang=%q messages\n got %s\nwant %s", tt.lang, got, want)
			}
		}
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x", "lang": "xx"}})
		if code := rpcCode(err); code != -32602 || !strings.Contains(err.Error(), "unknown language: xx") {
			t.Errorf("greet lang=xx: %v, want -32602 with the guest's message \"unknown language: xx\"", err)
		}
	})

	t.Run("shout", func(t *testing.T) {
		text, isErr := callText(t, cs, "shout", map[string]any{"text": `héllo "x"`}, nil)
		if isErr || text != `HéLLO "X"` {
			t.Errorf("shout = %q (isError %v), want %q", text, isErr, `HéLLO "X"`)
		}
		if text, isErr := callText(t, cs, "shout", map[string]any{}, nil); !isErr {
			t.Errorf("shout without text = %q, want a result with isError", text)
		}
	})
}

// hear subscribes cs to example://counter and calls increment until the
// session hears notifications/resources/updated for it (its notification
// stream may still be opening when the first increment happens), and
// checks that it heard of nothing else.
func (j *judge) hear(t *testing.T, cs *mcp.ClientSession, increment func()) {
	t.Helper()
	j.mu.Lock()
	j.updated = nil
	j.mu.Unlock()
	for len(j.heardNote) > 0 {
		<-j.heardNote
	}
	if err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: "example://counter"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	deadline := time.After(15 * time.Second)
	for heard := false; !heard; {
		increment()
		select {
		case <-j.heardNote:
			heard = true
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatal("no notifications/resources/updated after increment")
		}
	}
	j.mu.Lock()
	updated := slices.Clone(j.updated)
	j.mu.Unlock()
	for _, uri := range updated {
		if uri != "example://counter" {
			t.Errorf("notifications/resources/updated for %q, want only example://counter", uri)
		}
	}
}

// restart stops the server and starts it again on the same configuration
// and data, and returns a new session with it.
func (j *judge) restart() *mcp.ClientSession {
	j.srv.stop()
	j.srv = startedHTTPServer(j.tb, "--config", j.cfgPath)
	return j.connect(j.tb, era2025)
}

// counter checks the kv-backed counter (across a restart, which drops every
// instance), the notification a subscribed session hears when it changes,
// and the elicitation of reset. It returns the session it ends with.
func (j *judge) counter(t *testing.T, cs *mcp.ClientSession) *mcp.ClientSession {
	ctx := testContext(t)
	n := 0
	increment := func() {
		t.Helper()
		n++
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "increment", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("increment: %v", err)
		}
		want := fmt.Sprintf("count: %d", n)
		if res.IsError || len(res.Content) != 1 || textOf(res.Content[0]) != want {
			t.Fatalf("increment = %s, want the text %q", marshal(res.Content), want)
		}
		if got, want := marshal(res.StructuredContent), fmt.Sprintf(`{"count":%d}`, n); got != want {
			t.Fatalf("increment structuredContent = %s, want %s", got, want)
		}
	}
	expectCount := func(want int) {
		t.Helper()
		if got := readText(t, cs, "example://counter"); got != fmt.Sprint(want) {
			t.Fatalf("example://counter = %q, want %q", got, fmt.Sprint(want))
		}
	}

	expectCount(0)
	increment()
	increment()
	expectCount(2)

	j.hear(t, cs, increment)
	expectCount(n)

	// Every instance goes with the server: the count comes back from kv only.
	cs = j.restart()
	expectCount(n)

	answers := []struct {
		answer *mcp.ElicitResult
		want   string
		count  int
	}{
		{&mcp.ElicitResult{Action: "decline"}, "counter kept", n},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": false}}, "counter kept", n},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, "counter reset", 0},
	}
	for _, a := range answers {
		j.mu.Lock()
		j.elicited = nil
		j.answer = func() (*mcp.ElicitResult, error) { return a.answer, nil }
		j.mu.Unlock()
		text, isErr := callText(t, cs, "reset", map[string]any{}, nil)
		if isErr || text != a.want {
			t.Errorf("reset answered %s = %q (isError %v), want %q", marshal(a.answer), text, isErr, a.want)
		}
		j.mu.Lock()
		asked := j.elicited
		j.mu.Unlock()
		wantSchema := `{"properties":{"ok":{"type":"boolean"}},"required":["ok"],"type":"object"}`
		if len(asked) != 1 || asked[0].Message != "Reset the counter?" || marshal(asked[0].RequestedSchema) != wantSchema {
			t.Errorf("reset asked %s, want one elicitation \"Reset the counter?\" with schema %s", marshal(asked), wantSchema)
		}
		expectCount(a.count)
	}
	return cs
}

// probeWant is the text of a successful probe.
func probeWant() string {
	return strings.Join([]string{
		"motto: " + judgeMotto,
		"roots: 1",
		"files: " + judgeSibling + "," + judgeFile,
		fmt.Sprintf("size: %d", len(judgeFileText)),
		"file: " + judgeFileText,
		"http: 200 " + judgeHTTPBody,
	}, "\n")
}

// probe checks config, files, http, progress and log through the probe tool.
func (j *judge) probe(t *testing.T, cs *mcp.ClientSession) {
	path := filepath.ToSlash(filepath.Join(j.root, judgeFile))
	text, isErr := callText(t, cs, "probe", map[string]any{"path": path, "url": j.fetchURL}, "judge-probe")
	want := probeWant()
	if isErr || text != want {
		t.Errorf("probe (isError %v)\n got %q\nwant %q", isErr, text, want)
	}
	wantProgress := []string{"1/3 config", "2/3 files", "3/3 http"}
	var got []string
	waitFor(func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		got = got[:0]
		for _, p := range j.progress {
			if p.ProgressToken == "judge-probe" {
				got = append(got, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
			}
		}
		return len(got) >= len(wantProgress)
	})
	if diff := cmp.Diff(wantProgress, got); diff != "" {
		t.Errorf("probe's progress notifications (-want +got):\n%s", diff)
	}
	if !waitFor(func() bool { return strings.Contains(j.srv.stderr.String(), "probe: done") }) {
		t.Errorf("the server log has no line \"probe: done\" from the plugin")
	}

	// A path outside the granted root is the guest's isError, naming the step.
	text, isErr = callText(t, cs, "probe", map[string]any{"path": "/etc/passwd", "url": j.fetchURL}, nil)
	if !isErr || !strings.HasPrefix(text, "files: ") {
		t.Errorf("probe of /etc/passwd = %q (isError %v), want an isError result starting \"files: \"", text, isErr)
	}
}

// callText calls a tool that answers one text block and returns it.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, progressToken any) (string, bool) {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		params.SetProgressToken(progressToken)
	}
	res, err := cs.CallTool(testContext(t), params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s answered %d content blocks, want 1: %s", name, len(res.Content), marshal(res.Content))
	}
	return textOf(res.Content[0]), res.IsError
}

// readText reads a resource that holds one text content.
func readText(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("read %s = %s, want one content for the URI", uri, marshal(res.Contents))
	}
	return res.Contents[0].Text
}

func textOf(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("(a %T, not text)", c)
}

// rpcCode returns err's JSON-RPC error code, or 0.
func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}

// waitFor polls cond for up to 5 s: notifications and log lines travel
// apart from the response that caused them.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// probeTask calls probe as a task (it declares task support, ABI 1.4)
// over the raw wire, as no pinned client speaks the tasks extension: the
// task completes with the probe's text, and its statusMessage is the last
// progress the guest reported.
func (j *judge) probeTask(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"path": filepath.ToSlash(filepath.Join(j.root, judgeFile)), "url": j.fetchURL})
	res, rerr := rawCall(t, j.srv.url, "tools/call", "probe", `"name":"probe","arguments":`+string(args)+`,`+tasksMeta)
	id, _ := res["taskId"].(string)
	if rerr != nil || res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call probe with the tasks extension: want a task, got %v %v", res, rerr)
	}
	for end := time.Now().Add(checkTimeout); ; time.Sleep(20 * time.Millisecond) {
		res, rerr = rawCall(t, j.srv.url, "tasks/get", id, fmt.Sprintf(`"taskId":%q,%s`, id, tasksMeta))
		if rerr != nil || res["status"] != "working" || time.Now().After(end) {
			break
		}
	}
	result, _ := res["result"].(map[string]any)
	content, _ := result["content"].([]any)
	var text any
	if len(content) == 1 {
		text = content[0].(map[string]any)["text"]
	}
	if rerr != nil || res["status"] != "completed" || text != probeWant() || res["statusMessage"] != "http" {
		t.Fatalf("probe as a task: want completed with the probe's text and statusMessage http, got %v %v", res, rerr)
	}
}
