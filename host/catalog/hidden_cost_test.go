package catalog_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// workLog is a Policy hiding the plugin "priv" that records the work asked
// of it: how many views were taken and which templates were judged.
type workLog struct {
	mu        sync.Mutex
	views     int
	templates []string
}

func (w *workLog) View(abi.Principal) catalog.View {
	w.mu.Lock()
	w.views++
	w.mu.Unlock()
	return loggedView{w}
}

func (w *workLog) take() (int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, t := w.views, w.templates
	w.views, w.templates = 0, nil
	return n, t
}

type loggedView struct{ w *workLog }

func (v loggedView) Plugin(name string) bool { return name != "priv" }
func (v loggedView) Resource(plugin, _, template, _ string) bool {
	if template != "" {
		v.w.mu.Lock()
		v.w.templates = append(v.w.templates, template)
		v.w.mu.Unlock()
	}
	return plugin != "priv"
}
func (v loggedView) Template(plugin, _, _ string) bool { return plugin != "priv" }
func (v loggedView) Prompt(plugin, _ string) bool      { return plugin != "priv" }
func (v loggedView) Tool(plugin, _ string) bool        { return plugin != "priv" }

// TestHiddenCostsWhatMissingDoes: asking for something hidden makes the
// Set do the policy work of asking for something missing: one view, and
// for a hidden plugin's URI no template judged, so none matched (matching
// made a hidden scheme's read 8.8× slower than an unserved one's: issue
// 13 item 5, BenchmarkHidden in cmd/corral-bench). A visible templated URI
// is still judged with its template.
func TestHiddenCostsWhatMissingDoes(t *testing.T) {
	priv := &catalogtest.Provider{M: abi.Manifest{Name: "priv", Version: "1", ABI: abi.Major, Schemes: []string{"priv"},
		Templates: []abi.Template{{URITemplate: "priv://{number}", Name: "item", Complete: []string{"number"}}},
		Prompts:   []abi.Prompt{{Name: "plan"}},
		Tools:     []abi.Tool{{Name: "act", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}
	pub := &catalogtest.Provider{M: abi.Manifest{Name: "pub", Version: "1", ABI: abi.Major, Schemes: []string{"pub"},
		Templates: []abi.Template{{URITemplate: "pub://{number}", Name: "item"}}},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			return map[string]any{"contents": []any{map[string]string{"uri": r.URI, "text": "x"}}}, nil
		}}
	pol := &workLog{}
	set, err := catalog.NewSet([]catalog.Provider{priv, pub}, catalog.Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	ctx, r := context.Background(), catalog.Request{Principal: abi.Principal{ID: "bob"}}
	arg := abi.CompleteArgument{Name: "number"}
	ops := []struct {
		name            string
		hidden, missing func() error
	}{
		{"read", func() error { _, err := set.ReadResource(ctx, r, "priv://7"); return err },
			func() error { _, err := set.ReadResource(ctx, r, "nope://7"); return err }},
		{"prompt", func() error { _, err := set.GetPrompt(ctx, r, "plan", nil); return err },
			func() error { _, err := set.GetPrompt(ctx, r, "none", nil); return err }},
		{"tool", func() error { _, err := set.CallTool(ctx, r, "act", nil); return err },
			func() error { _, err := set.CallTool(ctx, r, "nope", nil); return err }},
		{"tool headers", func() error { set.ToolParamHeaders(r.Principal, "act"); return nil },
			func() error { set.ToolParamHeaders(r.Principal, "nope"); return nil }},
		{"complete", func() error {
			_, err := set.Complete(ctx, r, abi.CompleteRef{Type: "ref/resource", URI: "priv://{number}"}, arg, nil)
			return err
		}, func() error {
			_, err := set.Complete(ctx, r, abi.CompleteRef{Type: "ref/resource", URI: "nope://{number}"}, arg, nil)
			return err
		}},
	}
	for _, op := range ops {
		pol.take()
		herr := op.hidden()
		hviews, htemplates := pol.take()
		merr := op.missing()
		mviews, _ := pol.take()
		if (herr == nil) != (merr == nil) || herr != nil && catalog.AsError(herr).Kind != catalog.AsError(merr).Kind {
			t.Errorf("%s: hidden answers %v, missing %v", op.name, herr, merr)
		}
		if hviews != mviews {
			t.Errorf("%s: hidden takes %d views, missing %d", op.name, hviews, mviews)
		}
		if len(htemplates) > 0 {
			t.Errorf("%s: hidden judged with templates %v (so they were matched)", op.name, htemplates)
		}
	}
	if _, err := set.ReadResource(ctx, r, "pub://7"); err != nil {
		t.Fatalf("visible read: %v", err)
	}
	if _, templates := pol.take(); !cmp.Equal(templates, []string{"pub://{number}"}) {
		t.Errorf("a visible templated read judged with templates %v, want [pub://{number}]", templates)
	}
}
