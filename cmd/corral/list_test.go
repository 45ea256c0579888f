package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// listResources walks resources/list over HTTP (2026-07-28) and returns
// the URIs, failing on any error answer.
func (s *server) listResources() []string {
	s.t.Helper()
	var uris []string
	cursor := ""
	for range 50 {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			params += `,"cursor":` + string(c)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":` + params + `}}`
		req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "resources/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			s.t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ans struct {
			Result *struct {
				Resources []struct {
					URI string `json:"uri"`
				} `json:"resources"`
				NextCursor *string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil || ans.Result == nil {
			s.t.Fatalf("resources/list: %d %s", resp.StatusCode, raw)
		}
		for _, r := range ans.Result.Resources {
			uris = append(uris, r.URI)
		}
		if ans.Result.NextCursor == nil {
			return uris
		}
		cursor = *ans.Result.NextCursor
	}
	s.t.Fatal("resources/list did not end within 50 pages")
	return nil
}

// TestServeNoConfigLists runs `corral serve --plugins DIR` with no
// configuration over the bundled plugins and three hostile listers (one
// erring, one trapping, one hanging). Every resources/list answers, within
// about the list budget, with the conformance and issues resources and
// every plugin's static items; files, granted no root, contributes nothing
// and is logged as denied, not failed.
func TestServeNoConfigLists(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtPlugins(t, "conformance", "issues", "files")
	dir := t.TempDir()
	copyTo := func(src string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"conformance", "issues", "files"} {
		copyTo(filepath.Join(repoRoot, "build", "plugins", n+".wasm"))
	}
	for _, n := range []string{"listerror", "listtrap", "listhang"} {
		copyTo(filepath.Join(repoRoot, "testdata", "wat", n+".wasm"))
	}
	s := startServer(t, "--plugins", dir)
	for i := range 7 { // past limits.quarantineAfter (5): the hang stops costing
		start := time.Now()
		uris := s.listResources()
		for _, want := range []string{"test://static-text", "issues://guide/triage", "listerror://static", "listtrap://static", "listhang://static"} {
			if !slices.Contains(uris, want) {
				t.Errorf("list %d lacks %s: %v", i, want, uris)
			}
		}
		for _, u := range uris {
			if strings.HasPrefix(u, "file://") {
				t.Errorf("list %d: files without a root listed %s", i, u)
			}
		}
		if d := time.Since(start); d > 3*time.Second { // budget 500ms, plus a loaded machine
			t.Errorf("list %d took %v", i, d)
		}
	}
	logs := s.logs.String()
	for _, want := range []string{
		`"msg":"catalog: a plugin's list page was left out","plugin":"files","reason":"denied"`,
		`"plugin":"listtrap","reason":"failed"`,
		`"plugin":"listerror","reason":"error"`,
		`"msg":"plugin quarantined"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("server log lacks %s", want)
		}
	}
}
