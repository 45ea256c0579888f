package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sample plugins' claims (plugins/files, plugins/issues).
const (
	repoTemplate = "repo://{owner}/{repo}/issues/{number}"
	triagePrompt = "triage_issue"
)

// TestSampleConfig is `make run` judged by the Go SDK client: corral serves
// testdata/sample/corral.yaml over HTTP, and the client finds the files from
// docs/ and the sample issues, reads one of each, reads an issue through the
// repo:// template, and gets the triage_issue prompt.
func TestSampleConfig(t *testing.T) {
	if why := missingBuild(corralBin, sampleConfig,
		filepath.Join(repoRoot, "build", "plugins", "files.wasm"),
		filepath.Join(repoRoot, "build", "plugins", "issues.wasm")); why != "" {
		t.Skip(why)
	}
	srv := startedHTTPServer(t, "--config", sampleConfig)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", MaxRetries: -1}, era)
			checkSample(t, s, era)
		})
	}
}

func checkSample(t *testing.T, s *goSDKSession, era string) {
	ctx := testContext(t)
	if got := s.ProtocolVersion(); got != era {
		t.Fatalf("negotiated %q, want %q", got, era)
	}

	uris, pages, err := collect(ctx, s.ResourcesPage)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	t.Logf("%d resources in %d page(s)", len(uris), pages)
	if dup := duplicates(uris); len(dup) > 0 {
		t.Errorf("listed more than once: %q", dup)
	}
	first := map[string]string{}
	for _, u := range uris {
		scheme, _, ok := strings.Cut(u, "://")
		if ok && first[scheme] == "" {
			first[scheme] = u
		}
	}
	for _, scheme := range []string{"file", "issues"} {
		uri := first[scheme]
		t.Run("read "+scheme, func(t *testing.T) {
			if uri == "" {
				t.Fatalf("no %s:// resource among the %d listed: %q", scheme, len(uris), uris)
			}
			cs, err := s.Read(ctx, uri)
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(cs) == 0 || (cs[0].Text == "" && len(cs[0].Blob) == 0) {
				t.Fatalf("%s: empty contents %+v", uri, cs)
			}
			if cs[0].URI != uri {
				t.Errorf("%s: contents uri %q", uri, cs[0].URI)
			}
		})
	}

	t.Run("repo template", func(t *testing.T) {
		templates, _, err := collect(ctx, s.TemplatesPage)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(templates, repoTemplate) {
			t.Fatalf("%s not listed; got %q", repoTemplate, templates)
		}
		uri, err := completeRepoURI(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := s.Read(ctx, uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(cs) == 0 || cs[0].Text == "" {
			t.Fatalf("%s: want text contents, got %+v", uri, cs)
		}
	})

	t.Run("triage prompt", func(t *testing.T) {
		id, err := firstCompletion(ctx, s, &mcp.CompleteReference{Type: "ref/prompt", Name: triagePrompt}, "issue_id", nil)
		if err != nil {
			// Fall back to the number of a listed issue.
			_, id, _ = strings.Cut(first["issues"], "://")
			t.Logf("completing issue_id: %v; using %q from the resource list", err, id)
		}
		r, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: triagePrompt, Arguments: map[string]string{"issue_id": id}})
		if err != nil {
			t.Fatalf("prompts/get %s issue_id=%s: %v", triagePrompt, id, err)
		}
		if len(r.Messages) == 0 {
			t.Fatal("no messages")
		}
		embedded := false
		for _, m := range r.Messages {
			if er, ok := m.Content.(*mcp.EmbeddedResource); ok && er.Resource != nil {
				embedded = true
			}
		}
		if !embedded {
			t.Errorf("no message embeds the issue as a resource content block")
		}
	})
}

// completeRepoURI builds a readable repo:// URI from the server's own
// completions: an owner, then a repo of that owner, then an issue number of
// that repo (each completion given the earlier choices as context).
func completeRepoURI(ctx context.Context, s *goSDKSession) (string, error) {
	ref := &mcp.CompleteReference{Type: "ref/resource", URI: repoTemplate}
	chosen := map[string]string{}
	for _, arg := range []string{"owner", "repo", "number"} {
		v, err := firstCompletion(ctx, s, ref, arg, chosen)
		if err != nil {
			return "", err
		}
		chosen[arg] = v
	}
	return fmt.Sprintf("repo://%s/%s/issues/%s", chosen["owner"], chosen["repo"], chosen["number"]), nil
}

// firstCompletion asks for completions of arg with an empty prefix and
// returns the first value.
func firstCompletion(ctx context.Context, s *goSDKSession, ref *mcp.CompleteReference, arg string, chosen map[string]string) (string, error) {
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg}}
	if len(chosen) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: chosen}
	}
	r, err := s.cs.Complete(ctx, params)
	if err != nil {
		return "", fmt.Errorf("complete %s (context %v): %w", arg, chosen, err)
	}
	if len(r.Completion.Values) == 0 {
		return "", fmt.Errorf("complete %s (context %v): no values", arg, chosen)
	}
	return r.Completion.Values[0], nil
}
