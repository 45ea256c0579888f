package catalog_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// TestTemplateMatching holds the host to ABI.md §7.1 on templates: a read
// goes to the scheme's owner, its templates are tried in manifest order and
// the first that matches the whole URI is named with its variables; a URI
// no template matches still reaches the owner, without a template.
func TestTemplateMatching(t *testing.T) {
	type seen struct {
		Template  string            `json:"template"`
		Variables map[string]string `json:"variables"`
	}
	p := &catalogtest.Provider{
		M: abi.Manifest{Name: "m", Version: "1", ABI: abi.Major, Schemes: []string{"m"},
			Templates: []abi.Template{{URITemplate: "m://h/{a}/x", Name: "one"}, {URITemplate: "m://h/{+rest}", Name: "two"}}},
		Read: func(_ context.Context, req abi.ReadResourceRequest) (any, error) {
			text, _ := json.Marshal(seen{req.Template, req.Variables})
			return abi.ReadResourceResult{Contents: []json.RawMessage{mustJSON(t, map[string]string{"uri": req.URI, "text": string(text)})}}, nil
		},
	}
	s := mustSet(t, catalog.Options{}, p)
	tests := []struct {
		uri  string
		want seen
	}{
		{"m://h/q/x", seen{"m://h/{a}/x", map[string]string{"a": "q"}}},            // both match: the first wins
		{"m://h/q%2Fr/x", seen{"m://h/{a}/x", map[string]string{"a": "q/r"}}},      // a simple variable's value is decoded
		{"m://h/q/r/x", seen{"m://h/{+rest}", map[string]string{"rest": "q/r/x"}}}, // {a} matches no "/"
		{"m:opaque", seen{}}, // no template: still the owner's
	}
	for _, tt := range tests {
		res, err := s.ReadResource(context.Background(), catalog.Request{Principal: catalog.Anonymous()}, tt.uri)
		if err != nil {
			t.Fatalf("%s: %v", tt.uri, err)
		}
		var c struct{ Text string }
		var got seen
		if err := json.Unmarshal(res.Contents[0], &c); err != nil || json.Unmarshal([]byte(c.Text), &got) != nil {
			t.Fatalf("%s: contents %s", tt.uri, res.Contents[0])
		}
		if got.Template != tt.want.Template || len(got.Variables) != len(tt.want.Variables) {
			t.Errorf("%s: template %q variables %v; want %q %v", tt.uri, got.Template, got.Variables, tt.want.Template, tt.want.Variables)
			continue
		}
		for k, v := range tt.want.Variables {
			if got.Variables[k] != v {
				t.Errorf("%s: variable %s = %q, want %q", tt.uri, k, got.Variables[k], v)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
