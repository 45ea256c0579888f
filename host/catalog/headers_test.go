package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParamHeaders(t *testing.T) {
	good := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
		`"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"},"q":{"type":"string"}}}`
	got, err := paramHeaders(json.RawMessage(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []ParamHeader{{"B", "b", "boolean"}, {"N", "n", "integer"}, {"Region", "region", "string"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := map[string]string{
		"empty":          `{"properties":{"v":{"type":"string","x-mcp-header":""}}}`,
		"space":          `{"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":          `{"properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`,
		"non-ascii":      `{"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`,
		"object":         `{"properties":{"v":{"type":"object","x-mcp-header":"Data"}}}`,
		"number":         `{"properties":{"v":{"type":"number","x-mcp-header":"Score"}}}`,
		"duplicate case": `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`,
	}
	for name, schema := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := paramHeaders(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "x-mcp-header") {
				t.Errorf("accepted (%v)", err)
			}
		})
	}
}
