//go:build !wasip1

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
	"github.com/google/go-cmp/cmp"
)

var (
	anyone     = abi.Principal{ID: "guest"}
	maintainer = abi.Principal{ID: "ari", Groups: []string{"dev", "maintainers"}}
)

// sampleHost serves the repository's sample tracker under /data.
func sampleHost(t testing.TB) *corral.FakeHost {
	t.Helper()
	h := corral.NewFakeHost(abi.CapFiles, abi.CapConfig, abi.CapLog)
	h.Roots = []string{"/data"}
	h.Config["data"] = "issues.json"
	mod := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"issues.json", "attachments/login-error.png"} {
		b, err := os.ReadFile("../../testdata/sample/issues/" + name)
		if err != nil {
			t.Fatal(err)
		}
		h.AddFile("/data/"+name, b, mod)
	}
	return h
}

func call(t testing.TB, p *corral.Plugin, op abi.Op, req any) (abi.Status, string) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	st, out := p.Handle(op, b)
	return st, string(out)
}

func TestRead(t *testing.T) {
	defer corral.UseHost(sampleHost(t))()
	p := newPlugin()
	tests := []struct {
		name   string
		uri    string
		who    abi.Principal
		status abi.Status
		want   []string
	}{
		{"issue", "issues://1", anyone, abi.StatusOK, []string{`"uri":"issues://1","mimeType":"text/markdown"`,
			`# #1 Login fails with SSO`, `- Repository: acme/rocket`, `## Comments (2)`, `[login-error.png](issues://1/attachments/login-error.png)`}},
		{"repo form", "repo://orbit-labs/telemetry/issues/6", anyone, abi.StatusOK, []string{`"uri":"repo://orbit-labs/telemetry/issues/6"`, `Uploads time out`}},
		{"repo form wrong repo", "repo://acme/rocket/issues/6", anyone, abi.StatusError, []string{`"code":"not_found","message":"resource not found: repo://acme/rocket/issues/6"`}},
		{"png attachment", "issues://1/attachments/login-error.png", anyone, abi.StatusOK, []string{`"mimeType":"image/png","blob":"iVBORw0KGgo`}},
		{"text attachment", "issues://6/attachments/uploader.log", anyone, abi.StatusOK, []string{`"mimeType":"text/plain","text":"2026-03-02T09:14:07Z INFO`}},
		{"missing attachment", "issues://6/attachments/nope.txt", anyone, abi.StatusError, []string{`"code":"not_found"`}},
		{"guide", guideURI, anyone, abi.StatusOK, []string{`# Triage guide`}},
		{"missing issue", "issues://99", anyone, abi.StatusError, []string{`{"code":"not_found","message":"resource not found: issues://99"}`}},
		{"hidden issue", "issues://3", anyone, abi.StatusError, []string{`{"code":"not_found","message":"resource not found: issues://3"}`}},
		{"hidden issue, maintainer", "issues://3", maintainer, abi.StatusOK, []string{`Token leak in debug logs`}},
		{"hidden via repo form", "repo://orbit-labs/telemetry/issues/8", anyone, abi.StatusError, []string{`{"code":"not_found","message":"resource not found: repo://orbit-labs/telemetry/issues/8"}`}},
		{"non-canonical number", "issues://01", anyone, abi.StatusError, []string{`"code":"not_found"`}},
		{"garbage", "issues://1/comments", anyone, abi.StatusError, []string{`"code":"not_found"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out := call(t, p, abi.OpReadResource, abi.ReadResourceRequest{URI: tt.uri, Principal: tt.who})
			if st != tt.status {
				t.Errorf("status %d, want %d: %s", st, tt.status, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s\ndoes not contain %s", out, w)
				}
			}
		})
	}
}

// TestHiddenLikeMissing checks that a hidden issue answers byte for byte
// like a missing one, whatever the operation.
func TestHiddenLikeMissing(t *testing.T) {
	defer corral.UseHost(sampleHost(t))()
	p := newPlugin()
	pairs := []struct {
		name            string
		op              abi.Op
		hidden, missing any
	}{
		{"read", abi.OpReadResource, abi.ReadResourceRequest{URI: "issues://3", Principal: anyone}, abi.ReadResourceRequest{URI: "issues://3", Principal: anyone}},
		{"prompt", abi.OpGetPrompt,
			abi.GetPromptRequest{Name: triagePrompt, Arguments: map[string]string{"issue_id": "3"}, Principal: anyone},
			abi.GetPromptRequest{Name: triagePrompt, Arguments: map[string]string{"issue_id": "3"}, Principal: anyone}},
	}
	h := sampleHost(t)
	// The "missing" variant runs against a tracker without issue 3.
	var tr map[string]any
	data := h.Files["/data/issues.json"].Data
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	issues := tr["issues"].([]any)
	tr["issues"] = slices.DeleteFunc(issues, func(v any) bool { return v.(map[string]any)["number"] == float64(3) })
	without, _ := json.Marshal(tr)
	h.AddFile("/data/issues.json", without, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	for _, pr := range pairs {
		t.Run(pr.name, func(t *testing.T) {
			st1, hidden := call(t, p, pr.op, pr.hidden)
			restore := corral.UseHost(h)
			st2, missing := call(t, newPlugin(), pr.op, pr.missing)
			restore()
			if st1 != abi.StatusError || st1 != st2 || hidden != missing {
				t.Errorf("hidden: %d %s\nmissing: %d %s", st1, hidden, st2, missing)
			}
		})
	}
}

type listPage struct {
	Resources []struct {
		URI, Name, MimeType string
		Annotations         json.RawMessage
	}
	NextCursor string
}

func listAll(t *testing.T, p *corral.Plugin, who abi.Principal, limit int) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for range 50 {
		st, out := call(t, p, abi.OpListResources, abi.ListResourcesRequest{Cursor: cursor, Limit: limit, Principal: who})
		if st != abi.StatusOK {
			t.Fatal(out)
		}
		var page listPage
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Resources {
			uris = append(uris, r.URI)
		}
		if page.NextCursor == "" {
			return uris
		}
		cursor = page.NextCursor
	}
	t.Fatal("listing does not end")
	return nil
}

func TestList(t *testing.T) {
	defer corral.UseHost(sampleHost(t))()
	p := newPlugin()
	public := []string{"issues://1", "issues://1/attachments/login-error.png", "issues://2", "issues://4",
		"issues://5", "issues://6", "issues://6/attachments/uploader.log", "issues://7"}
	all := []string{"issues://1", "issues://1/attachments/login-error.png", "issues://2", "issues://3", "issues://4",
		"issues://5", "issues://6", "issues://6/attachments/uploader.log", "issues://7", "issues://8"}
	for _, limit := range []int{1, 3, 8, 100} {
		if diff := cmp.Diff(public, listAll(t, p, anyone, limit)); diff != "" {
			t.Errorf("limit %d, public (-want +got):\n%s", limit, diff)
		}
		if diff := cmp.Diff(all, listAll(t, p, maintainer, limit)); diff != "" {
			t.Errorf("limit %d, maintainer (-want +got):\n%s", limit, diff)
		}
	}
	_, out := call(t, p, abi.OpListResources, abi.ListResourcesRequest{Limit: 1, Principal: anyone})
	want := `{"resources":[{"uri":"issues://1","name":"acme/rocket#1","title":"Login fails with SSO when the session cookie expires",` +
		`"description":"open issue in acme/rocket","mimeType":"text/markdown",` +
		`"annotations":{"audience":["user","assistant"],"priority":0.8,"lastModified":"2026-03-01T16:45:00Z"}}],"nextCursor":"MS4w"}`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("first page (-want +got):\n%s", diff)
	}
	if st, out := call(t, p, abi.OpListResources, abi.ListResourcesRequest{Cursor: "%%", Limit: 1}); st != abi.StatusError || !strings.Contains(out, "malformed cursor") {
		t.Errorf("bad cursor: %d %s", st, out)
	}
}

func TestComplete(t *testing.T) {
	defer corral.UseHost(sampleHost(t))()
	p := newPlugin()
	tests := []struct {
		name    string
		ref     abi.CompleteRef
		arg     string
		value   string
		context map[string]string
		who     abi.Principal
		want    []string
	}{
		{"owners", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "owner", "", nil, anyone, []string{"acme", "orbit-labs"}},
		{"owner prefix", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "owner", "Or", nil, anyone, []string{"orbit-labs"}},
		{"repos of owner", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "repo", "", map[string]string{"owner": "acme"}, anyone, []string{"rocket"}},
		{"repos of other owner", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "repo", "", map[string]string{"owner": "orbit-labs"}, anyone, []string{"telemetry"}},
		{"numbers of repo", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "number", "", map[string]string{"owner": "orbit-labs", "repo": "telemetry"}, anyone, []string{"6", "7"}},
		{"numbers of repo, maintainer", abi.CompleteRef{Type: "ref/resource", URI: repoTemplate}, "number", "", map[string]string{"owner": "orbit-labs", "repo": "telemetry"}, maintainer, []string{"6", "7", "8"}},
		{"issue numbers", abi.CompleteRef{Type: "ref/resource", URI: issueTemplate}, "number", "", nil, anyone, []string{"1", "2", "4", "5", "6", "7"}},
		{"attachment numbers", abi.CompleteRef{Type: "ref/resource", URI: attachTemplate}, "number", "", nil, anyone, []string{"1", "6"}},
		{"attachment names", abi.CompleteRef{Type: "ref/resource", URI: attachTemplate}, "name", "", map[string]string{"number": "6"}, anyone, []string{"uploader.log"}},
		{"prompt issue", abi.CompleteRef{Type: "ref/prompt", Name: triagePrompt}, "issue_id", "#", nil, anyone, []string{"1", "2", "4", "5", "6", "7"}},
		{"prompt hidden issue", abi.CompleteRef{Type: "ref/prompt", Name: triagePrompt}, "issue_id", "3", nil, anyone, []string{}},
		{"prompt area", abi.CompleteRef{Type: "ref/prompt", Name: triagePrompt}, "area", "a", nil, anyone, []string{"api", "auth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out := call(t, p, abi.OpComplete, abi.CompleteRequest{Ref: tt.ref, Argument: abi.CompleteArgument{Name: tt.arg, Value: tt.value},
				Arguments: tt.context, Principal: tt.who})
			var res abi.CompleteResult
			if err := json.Unmarshal([]byte(out), &res); st != abi.StatusOK || err != nil {
				t.Fatalf("%d %s %v", st, out, err)
			}
			if diff := cmp.Diff(tt.want, res.Completion.Values); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTriagePrompt(t *testing.T) {
	defer corral.UseHost(sampleHost(t))()
	p := newPlugin()
	st, out := call(t, p, abi.OpGetPrompt, abi.GetPromptRequest{Name: triagePrompt,
		Arguments: map[string]string{"issue_id": "#6", "area": "telemetry"}, Principal: anyone})
	if st != abi.StatusOK {
		t.Fatal(out)
	}
	var res struct {
		Description string
		Messages    []struct {
			Role    string
			Content struct {
				Type        string
				Text        string
				Resource    struct{ URI, MimeType, Text string }
				Annotations json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 3 {
		t.Fatalf("%d messages: %s", len(res.Messages), out)
	}
	issue, guide, ask := res.Messages[0].Content, res.Messages[1].Content, res.Messages[2].Content
	if issue.Type != "resource" || issue.Resource.URI != "issues://6" || !strings.Contains(issue.Resource.Text, "Uploads time out") ||
		!strings.Contains(string(issue.Annotations), `"audience":["assistant"]`) {
		t.Errorf("issue block: %+v", issue)
	}
	if guide.Type != "resource" || guide.Resource.URI != guideURI || !strings.Contains(guide.Resource.Text, "# Triage guide") {
		t.Errorf("guide block: %+v", guide)
	}
	if ask.Type != "text" || !strings.Contains(ask.Text, `"telemetry"`) || res.Description != "Triage issue #6: Uploads time out on slow links" {
		t.Errorf("ask: %+v, description %q", ask, res.Description)
	}

	for _, bad := range []map[string]string{{"issue_id": "x"}, {"issue_id": "6", "area": "kitchen"}, {}} {
		if st, out := call(t, p, abi.OpGetPrompt, abi.GetPromptRequest{Name: triagePrompt, Arguments: bad, Principal: anyone}); st != abi.StatusError || !strings.Contains(out, "invalid_params") {
			t.Errorf("arguments %v: %d %s", bad, st, out)
		}
	}
}

func TestSearch(t *testing.T) {
	h := sampleHost(t)
	defer corral.UseHost(h)()
	p := newPlugin()
	tests := []struct {
		args string
		who  abi.Principal
		want []string
		not  []string
	}{
		{`{"query":"token"}`, anyone, []string{"No open issue matches"}, []string{"Token leak"}},
		{`{"query":"token"}`, maintainer, []string{"1 open issue(s)", "#3 [open] Token leak", `"type":"resource_link","uri":"issues://3"`}, nil},
		{`{"query":"dry-run","state":"closed"}`, anyone, []string{"#4 [closed]"}, nil},
		{`{"query":"bug","state":"all"}`, anyone, []string{"#1", "#4", "#6"}, []string{"#3"}},
		{`{"query":"x","state":"weird"}`, anyone, []string{`"isError":true`}, nil},
		{`{}`, anyone, []string{`missing required argument \"query\"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			h.ResetProgress() // a new call, as the host does
			st, out := call(t, p, abi.OpCallTool, abi.CallToolRequest{Name: searchTool, Arguments: json.RawMessage(tt.args), Principal: tt.who})
			if st != abi.StatusOK {
				t.Fatal(out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s\nlacks %s", out, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("%s\nleaks %s", out, n)
				}
			}
		})
	}
}

// TestSearchProgress finds one progress report per issue searched, ending
// at the total, and a total that counts only what the caller may see: a
// guest's search over every state does not count the private issue.
func TestSearchProgress(t *testing.T) {
	tests := []struct {
		who   abi.Principal
		total float64
	}{
		{anyone, 6},
		{maintainer, 8},
	}
	for _, tt := range tests {
		t.Run(tt.who.ID, func(t *testing.T) {
			h := sampleHost(t)
			defer corral.UseHost(h)()
			st, out := call(t, newPlugin(), abi.OpCallTool, abi.CallToolRequest{Name: searchTool,
				Arguments: json.RawMessage(`{"query":"no-such-word","state":"all"}`), Principal: tt.who})
			if st != abi.StatusOK {
				t.Fatal(out)
			}
			var want []corral.FakeProgress
			for i := 1; i <= int(tt.total); i++ {
				want = append(want, corral.FakeProgress{Progress: float64(i), Total: tt.total,
					Message: fmt.Sprintf("searched %d of %d issues", i, int(tt.total))})
			}
			if diff := cmp.Diff(want, h.Progress()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	h := sampleHost(t)
	delete(h.Config, "data")
	defer corral.UseHost(h)()
	if st, out := call(t, newPlugin(), abi.OpReadResource, abi.ReadResourceRequest{URI: "issues://1"}); st != abi.StatusError || !strings.Contains(out, `config value \"data\"`) {
		t.Errorf("no data config: %d %s", st, out)
	}
	h.Config["data"] = "/data/issues.json"
	h.AddFile("/data/issues.json", []byte(`{"issues":[{"number":1,"owner":"a","repo":"b"},{"number":1,"owner":"a","repo":"b"}]}`), time.Now())
	if st, out := call(t, newPlugin(), abi.OpReadResource, abi.ReadResourceRequest{URI: "issues://1"}); st != abi.StatusError || !strings.Contains(out, "not positive and unique") {
		t.Errorf("duplicate numbers: %d %s", st, out)
	}
}

func TestReloadsChangedData(t *testing.T) {
	h := sampleHost(t)
	defer corral.UseHost(h)()
	p := newPlugin()
	if st, _ := call(t, p, abi.OpReadResource, abi.ReadResourceRequest{URI: "issues://9"}); st != abi.StatusError {
		t.Fatal("issue 9 exists before the edit")
	}
	h.AddFile("/data/issues.json", []byte(`{"issues":[{"number":9,"owner":"a","repo":"b","title":"new"}]}`), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if st, out := call(t, p, abi.OpReadResource, abi.ReadResourceRequest{URI: "issues://9"}); st != abi.StatusOK || !strings.Contains(out, "# #9 new") {
		t.Errorf("after the edit: %d %s", st, out)
	}
}

func BenchmarkReadIssue(b *testing.B) {
	defer corral.UseHost(sampleHost(b))()
	p := newPlugin()
	req, _ := json.Marshal(abi.ReadResourceRequest{URI: "repo://acme/rocket/issues/1", Template: repoTemplate,
		Variables: map[string]string{"owner": "acme", "repo": "rocket", "number": "1"}, Principal: maintainer})
	b.ReportAllocs()
	for b.Loop() {
		if st, out := p.Handle(abi.OpReadResource, req); st != abi.StatusOK {
			b.Fatal(string(out))
		}
	}
}
