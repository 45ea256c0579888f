package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The conformance plugin's fixture names. They match the reference
// "everything server" that the official conformance suite expects.
const (
	uriStaticText   = "test://static-text"
	uriStaticBinary = "test://static-binary"
	uriTemplate     = "test://template/{id}/data"
	uriMissing      = "test://interop/no-such-resource"
	promptWithArgs  = "test_prompt_with_arguments"
	promptSimple    = "test_simple_prompt"
	toolSimpleText  = "test_simple_text"
)

// pngSignature starts every PNG file (RFC 2083, section 3.1).
var pngSignature = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// content is one item of a resources/read result, whichever client read it.
type content struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte // decoded
	IsBlob   bool
}

// rpcError is a JSON-RPC error as it came off the wire.
type rpcError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s (data %s)", e.Code, e.Message, e.Data)
}

// page is one page of a paginated list: the item names (URIs, URI
// templates or names) and the next cursor ("" at the end).
type page struct {
	items []string
	next  string
}

// session is what the checks need from a connected client. Each client
// library gets a small adapter; the checks are written once.
type session interface {
	// ProtocolVersion is the version the client negotiated.
	ProtocolVersion() string
	ResourcesPage(ctx context.Context, cursor string) (page, error)
	TemplatesPage(ctx context.Context, cursor string) (page, error)
	PromptsPage(ctx context.Context, cursor string) (page, error)
	ToolsPage(ctx context.Context, cursor string) (page, error)
	Read(ctx context.Context, uri string) ([]content, error)
	// GetPrompt returns the text of every text message.
	GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error)
	Complete(ctx context.Context, prompt, arg, value string) ([]string, error)
	// CallTool returns the text of every text content item and isError.
	CallTool(ctx context.Context, name string, args map[string]any) ([]string, bool, error)
	// ReadError reads uri and returns the JSON-RPC error exactly as sent,
	// or an error if the read did not fail with a JSON-RPC error.
	ReadError(ctx context.Context, uri string) (*rpcError, error)
	Close() error
}

// maxPages bounds a listing, so a server that never stops paging fails
// the test instead of hanging it.
const maxPages = 1000

// collect pages through a list to its end and returns every item and the
// number of pages. It fails on a repeated cursor or an endless listing.
func collect(ctx context.Context, list func(context.Context, string) (page, error)) ([]string, int, error) {
	var items []string
	seen := map[string]bool{}
	cursor := ""
	for pages := 1; pages <= maxPages; pages++ {
		p, err := list(ctx, cursor)
		if err != nil {
			return nil, pages, fmt.Errorf("page %d (cursor %q): %w", pages, cursor, err)
		}
		items = append(items, p.items...)
		if p.next == "" {
			return items, pages, nil
		}
		if seen[p.next] {
			return nil, pages, fmt.Errorf("page %d: cursor %q repeats an earlier one", pages, p.next)
		}
		seen[p.next] = true
		cursor = p.next
	}
	return nil, maxPages, fmt.Errorf("listing did not end within %d pages", maxPages)
}

// duplicates returns the items that occur more than once.
func duplicates(items []string) []string {
	count := map[string]int{}
	var dup []string
	for _, it := range items {
		count[it]++
		if count[it] == 2 {
			dup = append(dup, it)
		}
	}
	return dup
}

// notFoundCode is the JSON-RPC code for a missing resource in each era:
// 2026-07-28 uses Invalid params (SEP-2164); 2025-11-25 used -32002.
var notFoundCode = map[string]int64{era2026: -32602, era2025: -32002}

// runChecks runs every conformance-fixture check on s, which must have
// negotiated era.
func runChecks(t *testing.T, s session, era string) {
	ctx := testContext(t)

	t.Run("version", func(t *testing.T) {
		if got := s.ProtocolVersion(); got != era {
			t.Fatalf("negotiated protocol version %q, want %q", got, era)
		}
	})

	listChecks := []struct {
		name string
		list func(context.Context, string) (page, error)
		want []string
	}{
		{"resources/list", s.ResourcesPage, []string{uriStaticText, uriStaticBinary}},
		{"resources/templates/list", s.TemplatesPage, []string{uriTemplate}},
		{"prompts/list", s.PromptsPage, []string{promptSimple, promptWithArgs}},
		{"tools/list", s.ToolsPage, []string{toolSimpleText}},
	}
	for _, lc := range listChecks {
		t.Run(lc.name, func(t *testing.T) {
			items, pages, err := collect(ctx, lc.list)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d items in %d page(s)", len(items), pages)
			if dup := duplicates(items); len(dup) > 0 {
				t.Errorf("listed more than once: %q", dup)
			}
			for _, w := range lc.want {
				if !slices.Contains(items, w) {
					t.Errorf("%q not listed; got %q", w, items)
				}
			}
		})
	}

	t.Run("read text", func(t *testing.T) {
		cs, err := s.Read(ctx, uriStaticText)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 {
			t.Fatalf("got %d contents, want 1: %+v", len(cs), cs)
		}
		c := cs[0]
		if c.IsBlob || c.Text == "" {
			t.Errorf("want non-empty text contents, got %+v", c)
		}
		if diff := cmp.Diff([]string{uriStaticText, "text/plain"}, []string{c.URI, c.MIMEType}); diff != "" {
			t.Errorf("uri, mimeType (-want +got):\n%s", diff)
		}
	})

	t.Run("read blob", func(t *testing.T) {
		cs, err := s.Read(ctx, uriStaticBinary)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 {
			t.Fatalf("got %d contents, want 1: %+v", len(cs), cs)
		}
		c := cs[0]
		if !c.IsBlob || len(c.Blob) == 0 {
			t.Fatalf("want non-empty blob contents, got %+v", c)
		}
		if diff := cmp.Diff([]string{uriStaticBinary, "image/png"}, []string{c.URI, c.MIMEType}); diff != "" {
			t.Errorf("uri, mimeType (-want +got):\n%s", diff)
		}
		if !bytes.HasPrefix(c.Blob, pngSignature) {
			t.Errorf("blob is labelled image/png but does not start with the PNG signature: % x", c.Blob[:min(len(c.Blob), 8)])
		}
	})

	t.Run("read template", func(t *testing.T) {
		for _, id := range []string{"42", "7"} {
			uri := "test://template/" + id + "/data"
			cs, err := s.Read(ctx, uri)
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(cs) == 0 {
				t.Fatalf("%s: no contents", uri)
			}
			if cs[0].URI != uri {
				t.Errorf("%s: contents uri %q", uri, cs[0].URI)
			}
			if !strings.Contains(cs[0].Text, id) {
				t.Errorf("%s: text %q does not contain the id %q", uri, cs[0].Text, id)
			}
		}
	})

	t.Run("get prompt", func(t *testing.T) {
		args := map[string]string{"arg1": "alpha-71", "arg2": "beta-93"}
		texts, err := s.GetPrompt(ctx, promptWithArgs, args)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(texts, "\n")
		for k, v := range args {
			if !strings.Contains(all, v) {
				t.Errorf("prompt text %q lacks %s=%q", all, k, v)
			}
		}
	})

	t.Run("complete", func(t *testing.T) {
		values, err := s.Complete(ctx, promptWithArgs, "arg1", "")
		if err != nil {
			t.Fatal(err)
		}
		if values == nil {
			t.Fatal("completion.values missing (must be an array)")
		}
		if len(values) > 100 {
			t.Errorf("%d completion values, the spec allows at most 100", len(values))
		}
	})

	t.Run("call tool", func(t *testing.T) {
		texts, isError, err := s.CallTool(ctx, toolSimpleText, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if isError {
			t.Errorf("isError is true: %q", texts)
		}
		if len(texts) == 0 || texts[0] == "" {
			t.Errorf("want a non-empty text content, got %q", texts)
		}
	})

	t.Run("missing resource", func(t *testing.T) {
		e, err := s.ReadError(ctx, uriMissing)
		if err != nil {
			t.Fatal(err)
		}
		if e.Code != notFoundCode[era] {
			t.Errorf("error code %d (%s), want %d", e.Code, e.Message, notFoundCode[era])
		}
		var data struct {
			URI *string `json:"uri"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.URI == nil {
			t.Fatalf("error data %s has no uri (%v)", e.Data, err)
		}
		if *data.URI != uriMissing {
			t.Errorf("error data.uri = %q, want %q", *data.URI, uriMissing)
		}
	})
}
