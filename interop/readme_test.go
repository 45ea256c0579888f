package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peersInspector is the MCP Inspector's launcher that `make peers` installs
// (interop/install-inspector.sh).
var peersInspector = filepath.Join(peersDir, "inspector", "node_modules", "@modelcontextprotocol", "inspector",
	"clients", "launcher", "build", "index.js")

// readmeMakeRunAddr is where `make run` serves, as the README's snippets
// name it. The test serves the same configuration on a free port instead
// (7337 may be taken by a developer's `make run`) and points the snippets
// there.
const readmeMakeRunAddr = "127.0.0.1:7337"

// fence is one fenced code block of a Markdown file.
type fence struct {
	lang, body string
}

var fenceRE = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```")

func fences(md string) []fence {
	var out []fence
	for _, m := range fenceRE.FindAllStringSubmatch(md, -1) {
		out = append(out, fence{lang: m[1], body: m[2]})
	}
	return out
}

// clientEntry is a server entry of a Claude Desktop (mcpServers) or VS Code
// (servers) configuration snippet.
type clientEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
}

// TestReadmeSnippets runs every client snippet of README.md as written:
// each JSON configuration's command and arguments (with /path/to/corral and
// ${workspaceFolder} set to this checkout) and URL (pointed at a server of
// the same configuration), through the official Go SDK client in both
// eras, and each Inspector command line through the real MCP Inspector CLI
// in both of its eras. A snippet that stops working, or is removed, fails
// the test.
func TestReadmeSnippets(t *testing.T) {
	if why := missingBuild(corralBin, sampleConfig,
		filepath.Join(repoRoot, "build", "plugins", "files.wasm"),
		filepath.Join(repoRoot, "build", "plugins", "issues.wasm")); why != "" {
		t.Skip(why)
	}
	md, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The HTTP server first: it fills the sample's compilation cache, which
	// the stdio servers below then load from at once.
	srv := startedHTTPServer(t, "--config", sampleConfig)
	httpHost := strings.TrimPrefix(srv.url, "http://")

	var stdio, remote, inspector int
	for _, f := range fences(string(md)) {
		switch f.lang {
		case "json":
			var doc map[string]map[string]clientEntry
			if json.Unmarshal([]byte(f.body), &doc) != nil {
				continue
			}
			for _, key := range []string{"mcpServers", "servers"} {
				for name, e := range doc[key] {
					switch {
					case e.URL != "":
						remote++
						u := strings.Replace(e.URL, readmeMakeRunAddr, httpHost, 1)
						t.Run(key+"/"+name+"/http", func(t *testing.T) { checkHTTPSnippet(t, u) })
					case e.Command != "":
						stdio++
						t.Run(key+"/"+name+"/stdio", func(t *testing.T) { checkStdioSnippet(t, e) })
					}
				}
			}
		case "sh":
			for _, line := range strings.Split(f.body, "\n") {
				if strings.HasPrefix(line, "npx @modelcontextprotocol/inspector ") {
					inspector++
					line = strings.Replace(line, readmeMakeRunAddr, httpHost, 1)
					mode := "http"
					if strings.Contains(line, " -- ") {
						mode = "stdio"
					}
					t.Run("inspector/"+mode, func(t *testing.T) { checkInspectorSnippet(t, line) })
				}
			}
		}
	}
	// Claude Desktop and VS Code over stdio, VS Code over HTTP, the
	// Inspector over stdio and over HTTP.
	if stdio < 2 || remote < 1 || inspector < 2 {
		t.Errorf("README.md has %d stdio, %d HTTP and %d Inspector snippets; want at least 2, 1 and 2", stdio, remote, inspector)
	}
}

// expand sets a snippet's placeholders to this checkout, and its
// bin/corral to the binary under test (CORRAL_BIN: the wasmtime build in
// `make test-wasmtime`).
func expand(s string) string {
	s = strings.ReplaceAll(s, "/path/to/corral", repoRoot)
	s = strings.ReplaceAll(s, "${workspaceFolder}", repoRoot)
	if s == filepath.Join(repoRoot, "bin", "corral") || s == "bin/corral" {
		return corralBin
	}
	return s
}

func checkStdioSnippet(t *testing.T, e clientEntry) {
	if e.Type != "" && e.Type != "stdio" {
		t.Fatalf("type %q with a command; want stdio", e.Type)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = expand(a)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			stderr := &lockedBuffer{}
			cmd := exec.Command(expand(e.Command), args...)
			cmd.Stderr = stderr
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("server stderr:\n%s", tail(stderr.String(), 4000))
				}
			})
			s := connectGoSDK(t, &mcp.CommandTransport{Command: cmd}, era)
			checkSample(t, s, era)
			checkDemoTools(t, s)
		})
	}
}

func checkHTTPSnippet(t *testing.T, endpoint string) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, era)
			checkSample(t, s, era)
			checkDemoTools(t, s)
			checkSearchProgress(t, endpoint, era)
		})
	}
}

// checkDemoTools finds the sample's search tool and none of the
// conformance fixtures: a newcomer meets the real plugins.
func checkDemoTools(t *testing.T, s *goSDKSession) {
	tools, _, err := collect(testContext(t), s.ToolsPage)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if !slices.Contains(tools, "search_issues") {
		t.Errorf("tools/list lacks search_issues: %q", tools)
	}
	for _, name := range tools {
		if strings.HasPrefix(name, "test_") {
			t.Errorf("tools/list serves the conformance fixture %s to a newcomer", name)
		}
	}
}

// checkSearchProgress calls search_issues with a progress token and hears
// its progress, up to the report that completes it.
func checkSearchProgress(t *testing.T, endpoint, era string) {
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	c := mcp.NewClient(&mcp.Implementation{Name: "corral-readme-progress", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Params)
		},
	})
	ctx := testContext(t)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "search_issues", Arguments: map[string]any{"query": "login", "state": "all"}}
	p.SetProgressToken("readme")
	r, err := cs.CallTool(ctx, p)
	if err != nil || r.IsError {
		t.Fatalf("search_issues: %v %+v", err, r)
	}
	// The client hands notifications to the handler on its own schedule,
	// and the host coalesces a burst of reports to the latest: wait a
	// bounded time for the complete one.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		var last *mcp.ProgressNotificationParams
		if len(got) > 0 {
			last = got[len(got)-1]
		}
		mu.Unlock()
		if last != nil && last.Total > 0 && last.Progress == last.Total {
			if last.ProgressToken != "readme" || !strings.HasPrefix(last.Message, "searched ") {
				t.Errorf("last progress report %+v, want token readme and a message", last)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete progress report within 5s; heard %d, the last %+v", len(got), last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkInspectorSnippet runs a README line `npx @modelcontextprotocol/inspector
// --cli ...` with the installed Inspector (npx would fetch it) in both its
// eras, from the checkout, and judges its JSON result.
func checkInspectorSnippet(t *testing.T, line string) {
	for _, f := range []string{peersNode, peersInspector} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("MCP Inspector peer not installed (%s missing): run `make peers`", f)
		}
	}
	fields := strings.Fields(line)[2:] // after npx and the package
	if len(fields) == 0 || fields[0] != "--cli" {
		t.Fatalf("%q: want --cli right after the package", line)
	}
	var method, uri string
	for i := 0; i+1 < len(fields); i++ {
		switch fields[i] {
		case "--method":
			method = fields[i+1]
		case "--uri":
			uri = fields[i+1]
		}
	}
	for i, f := range fields {
		fields[i] = expand(f)
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			args := append([]string{peersInspector, "--cli", "--protocol-era", era, "--format", "json"}, fields[1:]...)
			cmd := exec.CommandContext(testContext(t), peersNode, args...)
			cmd.Dir = repoRoot
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // its catalog file, not the user's
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("inspector %s: %v\nstdout: %s\nstderr: %s", era, err, stdout.String(), tail(stderr.String(), 4000))
			}
			var out struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
					Contents []struct {
						URI  string `json:"uri"`
						Text string `json:"text"`
					} `json:"contents"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Error != nil {
				t.Fatalf("inspector %s printed %q (%v)", era, stdout.String(), err)
			}
			switch method {
			case "tools/list":
				var names []string
				for _, tl := range out.Result.Tools {
					names = append(names, tl.Name)
				}
				if !slices.Contains(names, "search_issues") {
					t.Errorf("tools/list lacks search_issues: %q", names)
				}
			case "resources/read":
				if len(out.Result.Contents) == 0 || out.Result.Contents[0].URI != uri || out.Result.Contents[0].Text == "" {
					t.Errorf("resources/read %s: %s", uri, stdout.String())
				}
			default:
				t.Fatalf("no check for --method %q", method)
			}
		})
	}
}
