package interop

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExamplePlugins drives the bundled files and issues plugins through
// the real binary with the sample configuration, as the Go SDK client sees
// them on 2026-07-28: listings with their annotations, directories, text
// and blobs, templates with context-dependent completion, the triage
// prompt, the search tool, and private issues that answer like missing
// ones.
func TestExamplePlugins(t *testing.T) {
	if why := missingBuild(corralBin, sampleConfig,
		filepath.Join(repoRoot, "build", "plugins", "files.wasm"),
		filepath.Join(repoRoot, "build", "plugins", "issues.wasm")); why != "" {
		t.Skip(why)
	}
	srv := startedHTTPServer(t, "--config", sampleConfig)
	s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", MaxRetries: -1}, era2026)
	ctx := testContext(t)
	docs, err := filepath.EvalSymlinks(filepath.Join(repoRoot, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	docsURI := "file://" + filepath.ToSlash(docs)

	var all []*mcp.Resource
	for r, err := range s.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		all = append(all, r)
	}
	find := func(uri string) *mcp.Resource {
		for _, r := range all {
			if r.URI == uri {
				return r
			}
		}
		return nil
	}

	t.Run("files listing", func(t *testing.T) {
		r := find(docsURI + "/architecture.md")
		if r == nil {
			t.Fatalf("%s/architecture.md not listed", docsURI)
		}
		if r.MIMEType != "text/markdown" || r.Size <= 0 || r.Annotations == nil || r.Annotations.LastModified == "" {
			t.Errorf("architecture.md listed as %+v (annotations %+v); want text/markdown, a size and lastModified", r, r.Annotations)
		}
	})

	t.Run("files read", func(t *testing.T) {
		dir := readOne(ctx, t, s, docsURI)
		if dir.MIMEType != "inode/directory" || !strings.Contains(dir.Text, "architecture.md") {
			t.Errorf("directory read as %q: %q", dir.MIMEType, dir.Text)
		}
		doc := readOne(ctx, t, s, docsURI+"/architecture.md")
		if !strings.HasPrefix(doc.Text, "# corral") {
			t.Errorf("architecture.md starts %q", firstLine(doc.Text))
		}
		for _, uri := range []string{docsURI + "/no-such-file.md", docsURI + "/../go.mod", "file:///etc/passwd"} {
			e, err := s.ReadError(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			if e.Code != -32602 {
				t.Errorf("%s: code %d, want -32602", uri, e.Code)
			}
		}
	})

	t.Run("issues listing and blobs", func(t *testing.T) {
		r := find("issues://1")
		if r == nil {
			t.Fatal("issues://1 not listed")
		}
		if r.Annotations == nil || len(r.Annotations.Audience) == 0 || r.Annotations.Priority == 0 {
			t.Errorf("issues://1 annotations %+v; want audience and priority", r.Annotations)
		}
		if find("issues://3") != nil || find("issues://8") != nil {
			t.Error("an issue private to maintainers is listed to an anonymous client")
		}
		png := readOne(ctx, t, s, "issues://1/attachments/login-error.png")
		if !bytes.HasPrefix(png.Blob, pngSignature) || png.MIMEType != "image/png" {
			t.Errorf("attachment read as %q, %d bytes", png.MIMEType, len(png.Blob))
		}
		text := readOne(ctx, t, s, "repo://acme/rocket/issues/2")
		if !strings.Contains(text.Text, "#2") && !strings.Contains(text.Text, "2") {
			t.Errorf("repo://acme/rocket/issues/2 reads %q", firstLine(text.Text))
		}
	})

	t.Run("hidden answers like missing", func(t *testing.T) {
		hidden, err := s.ReadError(ctx, "issues://3")
		if err != nil {
			t.Fatal(err)
		}
		missing, err := s.ReadError(ctx, "issues://999")
		if err != nil {
			t.Fatal(err)
		}
		if hidden.Code != missing.Code || hidden.Message != missing.Message ||
			string(hidden.Data) != strings.Replace(string(missing.Data), "999", "3", 1) {
			t.Errorf("hidden %v differs from missing %v", hidden, missing)
		}
	})

	t.Run("completion uses context", func(t *testing.T) {
		ref := &mcp.CompleteReference{Type: "ref/resource", URI: repoTemplate}
		complete := func(arg, value string, chosen map[string]string) []string {
			params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
			if chosen != nil {
				params.Context = &mcp.CompleteContext{Arguments: chosen}
			}
			r, err := s.cs.Complete(ctx, params)
			if err != nil {
				t.Fatalf("complete %s=%q: %v", arg, value, err)
			}
			return r.Completion.Values
		}
		if got := complete("owner", "orb", nil); !slices.Equal(got, []string{"orbit-labs"}) {
			t.Errorf("owner orb… = %q", got)
		}
		if got := complete("repo", "", map[string]string{"owner": "orbit-labs"}); !slices.Equal(got, []string{"telemetry"}) {
			t.Errorf("repos of orbit-labs = %q", got)
		}
		got := complete("number", "", map[string]string{"owner": "acme", "repo": "rocket"})
		if !slices.Contains(got, "1") || slices.Contains(got, "3") || slices.Contains(got, "6") {
			t.Errorf("numbers of acme/rocket = %q; want 1, never the private 3 or telemetry's 6", got)
		}
	})

	t.Run("triage prompt", func(t *testing.T) {
		r, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: triagePrompt, Arguments: map[string]string{"issue_id": "1", "area": "auth"}})
		if err != nil {
			t.Fatal(err)
		}
		var embedded []string
		for _, m := range r.Messages {
			if er, ok := m.Content.(*mcp.EmbeddedResource); ok && er.Resource != nil {
				embedded = append(embedded, er.Resource.URI)
			}
		}
		if !slices.Contains(embedded, "issues://1") {
			t.Errorf("triage_issue embeds %q; want issues://1", embedded)
		}
		_, err = s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: triagePrompt, Arguments: map[string]string{"area": "auth"}})
		if err == nil || !strings.Contains(err.Error(), "issue_id") {
			t.Errorf("triage_issue without issue_id: %v", err)
		}
	})

	t.Run("search tool", func(t *testing.T) {
		r, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_issues", Arguments: map[string]any{"query": "login", "state": "all"}})
		if err != nil || r.IsError {
			t.Fatalf("search_issues: %v %+v", err, r)
		}
		var links []string
		for _, c := range r.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				links = append(links, l.URI)
			}
		}
		if !slices.Contains(links, "issues://1") {
			t.Errorf("search for login links %q; want issues://1", links)
		}
		r, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_issues", Arguments: map[string]any{"query": ""}})
		if err != nil || !r.IsError {
			t.Errorf("an empty query: %v, isError %v", err, r != nil && r.IsError)
		}
	})
}

func readOne(ctx context.Context, t *testing.T, s *goSDKSession, uri string) *mcp.ResourceContents {
	t.Helper()
	r, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(r.Contents) == 0 || r.Contents[0].URI != uri {
		t.Fatalf("read %s: contents %+v", uri, r.Contents)
	}
	return r.Contents[0]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
