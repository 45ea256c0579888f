package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// BenchmarkOutput is the catalog's handling of one provider answer (the
// provider returns fixed bytes): decode, check, re-encode. The read rows
// are the bench fixture's 1 KiB text, the same text with a line break
// every 64 bytes (escapes), and a 64 KiB blob.
func BenchmarkOutput(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]
	lines := strings.Repeat(strings.Repeat("x", 63)+"\n", 16)
	blob := strings.Repeat("QUJD", 64<<10/4)
	read := func(field, s string) []byte {
		out, _ := json.Marshal(map[string]any{"contents": []map[string]string{{"uri": "bo://doc", "mimeType": "text/plain", field: s}}})
		return out
	}
	values := make([]string, 100)
	for i := range values {
		values[i] = fmt.Sprintf("cand-%04d", i)
	}
	complete, _ := json.Marshal(map[string]any{"completion": map[string]any{"values": values, "total": 1000, "hasMore": true}})
	var res []map[string]any
	for i := range 100 {
		res = append(res, map[string]any{"uri": fmt.Sprintf("bo://item/%04d", i), "name": fmt.Sprintf("item-%04d", i), "mimeType": "text/plain"})
	}
	list, _ := json.Marshal(map[string]any{"resources": res})
	prompt := []byte(`{"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Hello, Ada! Please answer in a terse style."}}]}`)
	tool := []byte(`{"content":[{"type":"text","text":` + string(must(json.Marshal(text))) + `}],"structuredContent":{"n":1,"ok":true}}`)

	ctx := context.Background()
	anon := catalog.Request{Principal: catalog.Anonymous()}
	for _, c := range []struct {
		name string
		out  []byte
		run  func(*catalog.Set) error
	}{
		{"read/1KiB", read("text", text), func(s *catalog.Set) error { _, err := s.ReadResource(ctx, anon, "bo://doc"); return err }},
		{"read/1KiB-lines", read("text", lines), func(s *catalog.Set) error { _, err := s.ReadResource(ctx, anon, "bo://doc"); return err }},
		{"read/64KiB-blob", read("blob", blob), func(s *catalog.Set) error { _, err := s.ReadResource(ctx, anon, "bo://doc"); return err }},
		{"prompts/get", prompt, func(s *catalog.Set) error { _, err := s.GetPrompt(ctx, anon, "greet", nil); return err }},
		{"tools/call/1KiB", tool, func(s *catalog.Set) error { _, err := s.CallTool(ctx, anon, "t", nil); return err }},
		{"completion/100", complete, func(s *catalog.Set) error {
			_, err := s.Complete(ctx, anon, abi.CompleteRef{Type: "ref/prompt", Name: "greet"}, abi.CompleteArgument{Name: "name"}, nil)
			return err
		}},
		{"list/100", list, func(s *catalog.Set) error { _, err := s.List(ctx, anon, catalog.ListResources, ""); return err }},
	} {
		p := &catalogtest.Provider{Raw: c.out, M: abi.Manifest{Name: "bo", ABI: abi.Major, Schemes: []string{"bo"}, ListsResources: true,
			Prompts: []abi.Prompt{{Name: "greet", Arguments: []abi.PromptArgument{{Name: "name"}}, Complete: []string{"name"}}},
			Tools:   []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}
		s, err := catalog.NewSet([]catalog.Provider{p}, catalog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.out)))
			for b.Loop() {
				if err := c.run(s); err != nil {
					b.Fatal(err)
				}
			}
		})
		// What one answer cost when host/plugin scanned it with json.Valid
		// before the catalog's own pass (until the strict reader): the
		// difference to the row above is what the single scan saves.
		b.Run(c.name+"/json.Valid-first", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.out)))
			for b.Loop() {
				if !json.Valid(c.out) {
					b.Fatal("invalid fixture")
				}
				if err := c.run(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
