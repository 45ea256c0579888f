package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
	"github.com/corral-mcp/corral/host/internal/jsontest"
	"github.com/google/go-cmp/cmp"
)

// rawProvider answers every call with the same bytes.
type rawProvider struct {
	m   abi.Manifest
	out []byte
}

func (p *rawProvider) Manifest() *abi.Manifest { return &p.m }

func (p *rawProvider) Digest() string { return "" }

func (p *rawProvider) RejectOutput(abi.Op, error) {}

func (p *rawProvider) Call(context.Context, Call) (Result, error) {
	return Result{Status: abi.StatusOK, Body: p.out}, nil
}

var _ Provider = (*rawProvider)(nil)

// outputSeeds are provider outputs for every operation: the valid shapes,
// the corners where the strict reader must agree with encoding/json (null,
// escapes, surrogates, numbers, what may follow the value) and those where
// it must not (repeated and case-folded member names).
var outputSeeds = []string{
	`{"contents":[{"uri":"fz://a","text":"hi"}]}`,
	`{"contents":[{"uri":"fz://a","mimeType":"text/plain","text":"line\none \"q\" \u00e9 \ud83d\ude00 <&>"}],"ttlMs":5}`,
	`{"contents":[{"uri":"other://a","text":"hi"}]}`,
	`{"contents":[{"uri":"fz://a","blob":"!!"}]}`,
	`{"contents":[{"uri":"fz://a","blob":"AAAA","_meta":{ "k" : [1, "x y"] }}]}`,
	`{"contents":[{"uri":"fz://a","blob":"AA\/A"}]}`,
	`{"contents":[{"uri":"fz://a","text":"\xff"}]}`,
	`{"contents":[{"uri":"fz://a","text":"lone \ud800 and \udc00x"}]}`,
	`{"contents":[{"uri":"fz://a","text":"a","TEXT":null,"Text":"b"}]}`,
	`{"contents":[{"uri":"fz://a","text":"a","text":null}]}`,
	`{"contents":[{"uri":"fz://a","text":"a","_meta":null}]}`,
	`{"contents":[{"uri":"fz://a","text":"a"},{"uri":"fz://b","text":"b"}],"contents":[{"blob":"AAAA"}],"contents":[{"text":"c"},null]}`,
	`{"contents":[{"uri":"fz://a","text":"a"}],"contents":[],"contents":[null]}`,
	`{"\u0063ontent\u017F":[{"URI":"fz://a","text":"x"}]}`,
	`{"contents":[{"uri":"fz://a","text":"x"}]} ]trailing`,
	`{"contents":[{"uri":"fz://a","text":"x"}]} x`,
	`{"contents":[{"uri":"fz://a","text":"x"}],"ttlMs":1.5}`,
	`{"contents":[{"uri":"fz://a","text":"x"}],"ttlMs":-0}`,
	`{"contents":[{"uri":"fz://a","text":"x"}],"ttlMs":99999999999999999999}`,
	`{"contents":[{"uri":"fz://a","text":"x","extra":{"deep":[[[{}]]],"n":-1.5e+3,"t":true,"f":false}}]}`,
	`{"contents":[{"uri":"fz://a","text":"x\u2028y\u0001"}]}`,
	`{"contents":[{"uri":"fz://a","text":5}]}`,
	`{"contents":{"uri":"fz://a"}}`,
	`{"contents":null}`,
	`{"resources":[{"uri":"fz://b","name":"b"}],"nextCursor":"c"}`,
	`{"resources":[{"uri":"fz://b","name":"b","size":12,"annotations":{"audience":["user"],"priority":0.50,"lastModified":"2025-01-01"},"icons":[{"src":"https://x/i.png","sizes":["48x48"],"theme":"dark"}],"_meta":{}}]}`,
	`{"resources":[{"uri":"fz://b","name":"b","annotations":{"priority":2}}]}`,
	`{"resources":[{"uri":"fz://b","name":"b","annotations":{"audience":["user"]},"annotations":{"priority":1e-400}}]}`,
	`{"resources":[{"uri":"fz://b","name":"b","icons":[{"src":"a"},{"src":"b"}],"icons":[{"theme":"light"}],"icons":[{"mimeType":"x"},{}]}]}`,
	`{"resources":[],"nextCursor":"c"}`,
	`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`,
	`{"description":"d","messages":[{"role":"assistant","content":{"type":"resource","resource":{"uri":"fz://r","text":"t"}}}]}`,
	`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"fz://r","text":"t"},"resource":null}}]}`,
	`{"messages":[{"role":"user","content":{"type":"image","data":"AAAA","mimeType":"image/png","annotations":{"audience":["assistant","user"]}}}]}`,
	`{"messages":null}`,
	`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":[]}`,
	`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"a": "b c"},"isError":true}`,
	`{"content":[{"type":"resource_link","uri":"fz://x","name":"x","size":3,"icons":[{"src":"s"}]}],"isError":null}`,
	`{"content":[{"type":"audio","data":"AAA=","mimeType":"audio/wav"}],"isError":"yes"}`,
	`{"completion":{"values":["a","b"],"total":1}}`,
	`{"completion":{"values":["a","b\u00e9"],"total":2,"hasMore":true}}`,
	`{"completion":{"values":["a","b"],"values":["c"],"values":["d",null]},"completion":{"total":7}}`,
	`{"completion":{"values":[1]}}`,
	`{"completion":null}`,
	`null`, `[]`, `{}`, "{}\x00", ``, ` `, `{"contents":[]}`, `"str"`, `{"a":1}}`, `{"a":[1,]}`, `{"a":01}`, `{"a":"\x"}`,
}

func addSeeds(f *testing.F) {
	for _, s := range outputSeeds {
		f.Add([]byte(s))
	}
}

// fuzzSet is a Set of one rawProvider answering raw.
func fuzzSet(t *testing.T, raw []byte) (*Set, *provider) {
	p := &rawProvider{out: raw, m: abi.Manifest{Name: "fz", ABI: abi.Major, Schemes: []string{"fz"}, ListsResources: true,
		Templates: []abi.Template{{URITemplate: "fz://t/{x}", Name: "t", Complete: []string{"x"}}},
		Prompts:   []abi.Prompt{{Name: "p"}},
		Tools:     []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}
	s, err := NewSet([]Provider{p}, Options{MaxContentBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return s, s.providers[0]
}

// sameJSON fails unless got and want decode to the same values.
func sameJSON(t *testing.T, raw []byte, got, want []json.RawMessage) {
	t.Helper()
	dec := func(items []json.RawMessage) []any {
		var vs []any
		for _, it := range items {
			var v any
			if err := json.Unmarshal(it, &v); err != nil {
				t.Fatalf("output %q is not JSON: %v", it, err)
			}
			vs = append(vs, v)
		}
		return vs
	}
	if diff := cmp.Diff(dec(want), dec(got)); diff != "" {
		t.Fatalf("output of %q differs from encoding/json's (-old +new):\n%s", raw, diff)
	}
}

func kindOf(err error) Kind {
	if err == nil {
		return 0
	}
	if ce := AsError(err); ce != nil {
		return ce.Kind
	}
	return -1
}

// FuzzReadOutput: for any read_resource output, ReadResource accepts and
// rejects exactly what the reflect-based decoding did, and sends JSON that
// decodes to the same contents.
func FuzzReadOutput(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, pr := fuzzSet(t, raw)
		want, ttl, wantKind := pr.oldRead(raw, s.opts.MaxContentBytes)
		rr, err := s.ReadResource(context.Background(), Request{Principal: anonymous}, "fz://a")
		if err == nil {
			mustRefuse(t, raw, "contents", func(s *Set) error {
				_, err := s.ReadResource(context.Background(), Request{Principal: anonymous}, "fz://a")
				return err
			})
		}
		if jsontest.Folded(raw, outputNames...) {
			return
		}
		if got := kindOf(err); got != wantKind {
			t.Fatalf("%q: error kind %d (%v), encoding/json's %d", raw, got, err, wantKind)
		}
		if err != nil {
			return
		}
		sameJSON(t, raw, rr.Contents, want)
		wantTTL := time.Duration(0)
		if ttl != nil && *ttl >= 0 {
			wantTTL = time.Duration(*ttl) * time.Millisecond
		}
		if rr.TTL != wantTTL {
			t.Fatalf("%q: TTL %v, want %v", raw, rr.TTL, wantTTL)
		}
	})
}

// FuzzPromptOutput is FuzzReadOutput for get_prompt.
func FuzzPromptOutput(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, pr := fuzzSet(t, raw)
		want, ok := pr.oldPrompt(raw)
		got, err := s.GetPrompt(context.Background(), Request{Principal: anonymous}, "p", nil)
		if err == nil {
			mustRefuse(t, raw, "messages", func(s *Set) error {
				_, err := s.GetPrompt(context.Background(), Request{Principal: anonymous}, "p", nil)
				return err
			})
		}
		if jsontest.Folded(raw, outputNames...) {
			return
		}
		if (err == nil) != ok {
			t.Fatalf("%q: error %v, encoding/json accepted: %v", raw, err, ok)
		}
		if err == nil {
			sameJSON(t, raw, []json.RawMessage{got}, []json.RawMessage{want})
		} else if kindOf(err) != KindInternal {
			t.Fatalf("%q: error %v is not internal", raw, err)
		}
	})
}

// FuzzToolOutput is FuzzReadOutput for call_tool.
func FuzzToolOutput(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, pr := fuzzSet(t, raw)
		want, ok := pr.oldTool(raw)
		got, err := s.CallTool(context.Background(), Request{Principal: anonymous}, "t", nil)
		if err == nil {
			mustRefuse(t, raw, "content", func(s *Set) error {
				_, err := s.CallTool(context.Background(), Request{Principal: anonymous}, "t", nil)
				return err
			})
		}
		if jsontest.Folded(raw, outputNames...) {
			return
		}
		if (err == nil) != ok {
			t.Fatalf("%q: error %v, encoding/json accepted: %v", raw, err, ok)
		}
		if err == nil {
			sameJSON(t, raw, []json.RawMessage{got}, []json.RawMessage{want})
		} else if kindOf(err) != KindInternal {
			t.Fatalf("%q: error %v is not internal", raw, err)
		}
	})
}

// FuzzListOutput is FuzzReadOutput for list_resources, where a refused
// page is skipped (the list itself never fails).
func FuzzListOutput(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, pr := fuzzSet(t, raw)
		want, next, ok := pr.oldList(raw, s.opts.PageSize)
		page, err := s.List(context.Background(), Request{Principal: anonymous}, ListResources, "")
		if err != nil {
			t.Fatalf("%q: the list failed: %v", raw, err)
		}
		skipped := len(page.Skipped) > 0
		if !skipped {
			mustRefuse(t, raw, "resources", func(s *Set) error {
				page, err := s.List(context.Background(), Request{Principal: anonymous}, ListResources, "")
				if err == nil && len(page.Skipped) > 0 { // a refused page is skipped, not an error
					err = &Error{Kind: KindInternal, Message: "skipped", Err: page.Skipped[0].Err}
				}
				return err
			})
		}
		if jsontest.Folded(raw, outputNames...) {
			return
		}
		if skipped == ok {
			t.Fatalf("%q: skipped %v, encoding/json accepted: %v", raw, page.Skipped, ok)
		}
		if !ok {
			return
		}
		sameJSON(t, raw, page.Items, want)
		if (page.NextCursor != nil) != (next != "") {
			t.Fatalf("%q: next cursor %v, encoding/json's %q", raw, page.NextCursor, next)
		}
	})
}

// FuzzCompleteOutput: the completion decodes to the same abi.CompleteResult.
func FuzzCompleteOutput(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got abi.CompleteResult
		wantErr := oldDecodeStrict(raw, &want)
		err := newDec(raw).completeResult(&got)
		if err == nil {
			for _, v := range refusedVariants(raw, "completion") {
				var r abi.CompleteResult
				if newDec(v).completeResult(&r) == nil {
					t.Fatalf("%q accepted", v)
				}
			}
		}
		if jsontest.Folded(raw, outputNames...) {
			return
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", raw, err, wantErr)
		}
		if err == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q: (-encoding/json +new):\n%s", raw, diff)
			}
		}
	})
}

// mustRefuse checks that call refuses raw's refusedVariants as invalid
// output.
func mustRefuse(t *testing.T, raw []byte, name string, call func(*Set) error) {
	t.Helper()
	for _, v := range refusedVariants(raw, name) {
		s, _ := fuzzSet(t, v)
		if err := call(s); kindOf(err) != KindInternal {
			t.Fatalf("%q: error %v, want invalid output", v, err)
		}
	}
}

// outputNames are the member names the catalog reads in provider output.
var outputNames = func() []string {
	var all []string
	for _, n := range []*jsonread.Names{readResultFields, contentsFields, annotationsFields, iconFields, resourceFields,
		blockFields, messageFields, promptFields, toolFields, listFields, completeFields, completionFields} {
		all = append(all, n.Strings()...)
	}
	return all
}()

// refusedVariants are raw with a top-level member repeated and with one
// written in another case: what the strict reader must always refuse.
func refusedVariants(raw []byte, name string) [][]byte {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil
	}
	rest := t[1:]
	if bytes.TrimLeft(rest, " \t\r\n")[0] != '}' {
		rest = append([]byte{','}, rest...)
	}
	var out [][]byte
	for _, inject := range []string{`"` + name + `":null,"` + name + `":null`, `"` + strings.ToUpper(name) + `":null`} {
		out = append(out, append([]byte("{"+inject), rest...))
	}
	return out
}
