package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// FuzzProviderOutput feeds arbitrary bytes as a provider's answer to every
// operation. The catalog must never panic, and whatever it accepts is
// valid JSON that stays inside the provider's claims.
func FuzzProviderOutput(f *testing.F) {
	for _, s := range []string{
		`{"contents":[{"uri":"fz://a","text":"hi"}]}`,
		`{"contents":[{"uri":"other://a","text":"hi"}]}`,
		`{"contents":[{"uri":"fz://a","blob":"!!"}]}`,
		`{"contents":[{"uri":"fz://a","text":"\xff"}]}`,
		`{"resources":[{"uri":"fz://b","name":"b"}],"nextCursor":"c"}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":[]}`,
		`{"completion":{"values":["a","b"],"total":1}}`,
		`{"content":[{"type":"resource_link","uri":"fz://x","name":"x"}]}`,
		`null`, `[]`, `{"contents":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := &catalogtest.Provider{
			M: abi.Manifest{Name: "fz", ABI: abi.Major, Schemes: []string{"fz"}, ListsResources: true,
				Templates: []abi.Template{{URITemplate: "fz://t/{x}", Name: "t", Complete: []string{"x"}}},
				Prompts:   []abi.Prompt{{Name: "p"}},
				Tools:     []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
			Raw: raw,
		}
		s, err := catalog.NewSet([]catalog.Provider{p}, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if rr, err := s.ReadResource(ctx, anon, "fz://a"); err == nil {
			for _, c := range rr.Contents {
				var v struct {
					URI  string  `json:"uri"`
					Text *string `json:"text"`
				}
				if json.Unmarshal(c, &v) != nil || !strings.HasPrefix(strings.ToLower(v.URI), "fz:") {
					t.Fatalf("accepted contents %s", c)
				}
				if v.Text != nil && !utf8.ValidString(*v.Text) {
					t.Fatalf("accepted invalid UTF-8 %s", c)
				}
			}
		}
		if page, err := s.List(ctx, anon, catalog.ListResources, ""); err == nil {
			for _, it := range page.Items {
				if !json.Valid(it) {
					t.Fatalf("accepted list item %s", it)
				}
			}
		}
		for _, call := range []func() (json.RawMessage, error){
			func() (json.RawMessage, error) { return s.GetPrompt(ctx, anon, "p", nil) },
			func() (json.RawMessage, error) { return s.CallTool(ctx, anon, "t", nil) },
		} {
			if out, err := call(); err == nil && !json.Valid(out) {
				t.Fatalf("accepted invalid JSON %s", out)
			}
		}
		c, err := s.Complete(ctx, anon, abi.CompleteRef{Type: "ref/resource", URI: "fz://t/{x}"}, abi.CompleteArgument{Name: "x"}, nil)
		if err == nil && (len(c.Values) > catalog.MaxCompletionValues || (c.Total != nil && *c.Total < len(c.Values))) {
			t.Fatalf("accepted completion %+v", c)
		}
	})
}

// FuzzInputMembers feeds arbitrary inputResponses and requestState to a
// provider that asks for input. Nothing forged is ever accepted as state,
// and what reaches the provider is an object of objects.
func FuzzInputMembers(f *testing.F) {
	f.Add([]byte(`{"confirm":{"action":"accept","content":{"ok":true}}}`), "")
	f.Add([]byte(`{"confirm":12345}`), "AAAA")
	f.Add([]byte(`null`), "x-TAMPERED")
	f.Add([]byte(`{"r":{"roots":[{"uri":"file:///"}]}}`), "")
	var seen abi.Input
	s, err := catalog.NewSet([]catalog.Provider{confirmer("a", &seen)}, catalog.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, responses []byte, state string) {
		seen = abi.Input{}
		in := &catalog.Input{Capabilities: elicitCaps, Responses: responses}
		if state != "" {
			in.State = &state
		}
		_, err := call(s, anon.Principal, "a_tool", `{}`, in)
		var ir *catalog.InputRequiredError
		if err != nil && !errors.As(err, &ir) {
			if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInvalidParams {
				t.Fatalf("err = %v, want input required or invalid params", err)
			}
			return
		}
		if state != "" {
			t.Fatalf("forged requestState %q was accepted", state)
		}
		for k, v := range seen.InputResponses {
			if len(v) == 0 || v[0] != '{' {
				t.Fatalf("provider saw inputResponses[%q] = %s", k, v)
			}
		}
	})
}
