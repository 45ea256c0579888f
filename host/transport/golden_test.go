package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"github.com/corral-mcp/corral/host/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden with the actual server messages")

const goldenDir = "../../testdata/golden"

// TestGolden replays every testdata/golden/*.txtar scenario.
//
// A stdio scenario has a "client" section (one message per line) and a
// "server" section (the expected lines). An HTTP scenario has numbered
// "N.request" sections (method, headers, blank line, body) and "N.response"
// sections (status, the headers that matter, blank line, body). Every
// server message is validated against the JSON schema of its era.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s (%v)", goldenDir, err)
	}
	schemas := loadSchemas(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var changed bool
			if strings.HasPrefix(filepath.Base(file), "http") {
				changed = runHTTPGolden(t, ar, schemas)
			} else {
				changed = runStdioGolden(t, ar, schemas)
			}
			if changed && *update {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func section(ar *txtar.Archive, name string) *txtar.File {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			return &ar.Files[i]
		}
	}
	return nil
}

func nonEmptyLines(b []byte) []string {
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func runStdioGolden(t *testing.T, ar *txtar.Archive, schemas *schemaSet) bool {
	client := section(ar, "client")
	if client == nil {
		t.Fatal("no client section")
	}
	var out bytes.Buffer
	// One request at a time keeps the response order stable.
	err := ServeStdio(context.Background(), newTestServer(t), bytes.NewReader(client.Data), &out,
		StdioOptions{MaxConcurrent: 1, MaxMessageBytes: 4096})
	if err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	got := nonEmptyLines(out.Bytes())

	eras := requestEras(t, nonEmptyLines(client.Data))
	for i, line := range got {
		schemas.validate(t, []byte(line), eras)
		got[i] = hideCursors(t, line)
	}

	want := section(ar, "server")
	if *update {
		data := []byte(strings.Join(got, "\n") + "\n")
		if want == nil {
			ar.Files = append(ar.Files, txtar.File{Name: "server", Data: data})
			return true
		}
		changed := !bytes.Equal(want.Data, data)
		want.Data = data
		return changed
	}
	if want == nil {
		t.Fatal("no server section (run with -update)")
	}
	if diff := cmp.Diff(nonEmptyLines(want.Data), got); diff != "" {
		t.Errorf("server messages (-want +got):\n%s", diff)
	}
	return false
}

// reqInfo is what validation needs to know of a request.
type reqInfo struct {
	method string
	modern bool
}

// requestEras maps each request's raw id to its method and era.
func requestEras(t *testing.T, lines []string) map[string]reqInfo {
	eras := map[string]reqInfo{}
	for _, l := range lines {
		m, err := mcp.Decode([]byte(l))
		if err != nil || m.ID == nil {
			continue
		}
		eras[string(m.ID)] = reqInfo{method: m.Method, modern: m.Modern()}
	}
	return eras
}

var sessionRE = regexp.MustCompile(`^[A-Za-z0-9_-]{100,131}$`)

// cursorRE finds list cursors, which are sealed with a fresh nonce each and
// so differ from run to run.
var cursorRE = regexp.MustCompile(`"nextCursor":"([^"]*)"`)

// hideCursors replaces every nextCursor in msg with "<cursor>", after
// checking that it is base64url.
func hideCursors(t *testing.T, msg string) string {
	t.Helper()
	return cursorRE.ReplaceAllStringFunc(msg, func(m string) string {
		c := cursorRE.FindStringSubmatch(m)[1]
		if _, err := base64.RawURLEncoding.DecodeString(c); err != nil || c == "" {
			t.Errorf("cursor %q is not base64url: %v", c, err)
		}
		return `"nextCursor":"<cursor>"`
	})
}

func runHTTPGolden(t *testing.T, ar *txtar.Archive, schemas *schemaSet) bool {
	h := NewHTTPHandler(newTestServer(t), HTTPOptions{MaxBodyBytes: 4096})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()

	var names []int
	for _, f := range ar.Files {
		if n, ok := strings.CutSuffix(f.Name, ".request"); ok {
			i, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("bad section name %q", f.Name)
			}
			names = append(names, i)
		}
	}
	sort.Ints(names)
	session := ""
	changed := false
	for _, n := range names {
		reqSec := section(ar, fmt.Sprintf("%d.request", n))
		got, sid := doHTTP(t, ts, reqSec.Data, session)
		if sid != "" {
			session = sid
		}
		if body := httpBody(got); body != "" {
			for _, msg := range sseOrJSON(body) {
				schemas.validate(t, []byte(msg), requestEras(t, []string{string(httpBody(reqSec.Data))}))
			}
		}
		name := fmt.Sprintf("%d.response", n)
		want := section(ar, name)
		if *update {
			if want == nil {
				ar.Files = append(ar.Files, txtar.File{Name: name, Data: got})
				changed = true
			} else if !bytes.Equal(want.Data, got) {
				want.Data, changed = got, true
			}
			continue
		}
		if want == nil {
			t.Fatalf("no %s section (run with -update)", name)
		}
		if diff := cmp.Diff(string(want.Data), string(got)); diff != "" {
			t.Errorf("exchange %d (-want +got):\n%s", n, diff)
		}
	}
	if *update {
		// Keep request/response pairs together.
		sort.SliceStable(ar.Files, func(i, j int) bool { return sectionKey(ar.Files[i].Name) < sectionKey(ar.Files[j].Name) })
	}
	return changed
}

func sectionKey(name string) int {
	num, kind, _ := strings.Cut(name, ".")
	n, _ := strconv.Atoi(num)
	k := 0
	if kind == "response" {
		k = 1
	}
	return n*2 + k
}

func httpBody(sec []byte) string {
	_, body, _ := strings.Cut(string(sec), "\n\n")
	return strings.TrimSpace(body)
}

// sseOrJSON returns the JSON messages of a response body, plain or SSE.
func sseOrJSON(body string) []string {
	if strings.HasPrefix(body, "{") {
		return []string{body}
	}
	var out []string
	for l := range strings.SplitSeq(body, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// doHTTP performs one request section and renders the response section.
// "<session>" in a header stands for the last minted Mcp-Session-Id.
func doHTTP(t *testing.T, ts *httptest.Server, spec []byte, session string) ([]byte, string) {
	t.Helper()
	head, body, _ := strings.Cut(string(spec), "\n\n")
	lines := strings.Split(head, "\n")
	req, err := http.NewRequest(strings.TrimSpace(lines[0]), ts.URL+"/mcp", strings.NewReader(strings.TrimSuffix(body, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("bad header line %q", l)
		}
		v = strings.TrimPrefix(v, " ")
		v = strings.ReplaceAll(v, "<session>", session)
		switch {
		case strings.EqualFold(k, "Host"):
			req.Host = v
		case strings.HasPrefix(k, "-"): // "-Accept:" removes a default header
			req.Header.Del(k[1:])
		default:
			// Raw assignment keeps the case the scenario wrote.
			req.Header[k] = append(req.Header[k], v)
		}
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d\n", resp.StatusCode)
	sid := resp.Header.Get(HeaderSessionID)
	for _, k := range []string{"Allow", "Content-Type", HeaderSessionID} {
		if v := resp.Header.Get(k); v != "" {
			if k == HeaderSessionID {
				if !sessionRE.MatchString(v) {
					t.Errorf("session id %q is not a sealed session token", v)
				}
				v = "<session>"
			}
			fmt.Fprintf(&out, "%s: %s\n", k, v)
		}
	}
	out.WriteString("\n")
	if len(rb) > 0 {
		out.WriteString(hideCursors(t, string(bytes.TrimRight(rb, "\n"))))
		out.WriteString("\n")
	}
	return []byte(out.String()), sid
}

// schemaSet validates server messages against the official schemas.
type schemaSet struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
}

const (
	schemaModern = "file:///mcp/2026-07-28/schema.json"
	schemaLegacy = "file:///mcp/2025-11-25/schema.json"
)

func loadSchemas(t *testing.T) *schemaSet {
	t.Helper()
	c := jsonschema.NewCompiler()
	for url, file := range map[string]string{
		schemaModern: "../../testdata/schema/2026-07-28/schema.json",
		schemaLegacy: "../../testdata/schema/2025-11-25/schema.json",
	} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
	}
	return &schemaSet{compiler: c, cache: map[string]*jsonschema.Schema{}}
}

func (s *schemaSet) schema(t *testing.T, base, def string) *jsonschema.Schema {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := base + "#/$defs/" + def
	if sch, ok := s.cache[key]; ok {
		return sch
	}
	sch, err := s.compiler.Compile(key)
	if err != nil {
		t.Fatalf("compile %s: %v", key, err)
	}
	s.cache[key] = sch
	return sch
}

// resultDefs names the result definition of each method.
var resultDefs = map[string]string{
	"server/discover":          "DiscoverResult",
	"initialize":               "InitializeResult",
	"ping":                     "EmptyResult",
	"logging/setLevel":         "EmptyResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"prompts/get":              "GetPromptResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"completion/complete":      "CompleteResult",
}

// validate checks one server message against the schema of the era of
// the request it answers (modern when that is unknown).
func (s *schemaSet) validate(t *testing.T, msg []byte, eras map[string]reqInfo) {
	t.Helper()
	var env struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &env); err != nil {
		t.Errorf("server message is not JSON: %v\n%s", err, msg)
		return
	}
	info, known := eras[string(env.ID)]
	base := schemaModern
	if known && !info.modern {
		base = schemaLegacy
	}
	check := func(def string, v []byte) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
		if err != nil {
			t.Errorf("decode: %v", err)
			return
		}
		if err := s.schema(t, base, def).Validate(inst); err != nil {
			t.Errorf("%s does not validate against %s#%s: %v", v, base, def, err)
		}
	}
	check("JSONRPCMessage", msg)
	switch {
	case env.Error != nil:
		check("JSONRPCErrorResponse", msg)
		if base == schemaModern {
			switch env.Error.Code {
			case mcp.CodeUnsupportedVersion:
				check("UnsupportedProtocolVersionError", msg)
			case mcp.CodeHeaderMismatch:
				check("HeaderMismatchError", msg)
			}
		}
	case env.Result != nil:
		check("JSONRPCResultResponse", msg)
		if def, ok := resultDefs[info.method]; ok && known {
			check(def, env.Result)
		} else {
			t.Errorf("result for an unknown request: %s", msg)
		}
	}
}

// scanLines is a helper for tests reading a stdio stream line by line.
func scanLines(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return sc
}
