package catalog_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// hideToolsFrom is a Policy under which principal hidden sees no tool.
type hideToolsFrom string

func (h hideToolsFrom) View(p abi.Principal) catalog.View { return toolView(p.ID != string(h)) }

type toolView bool

func (toolView) Plugin(string) bool              { return true }
func (toolView) Resource(_, _, _, _ string) bool { return true }
func (toolView) Template(_, _, _ string) bool    { return true }
func (toolView) Prompt(_, _ string) bool         { return true }
func (v toolView) Tool(_, _ string) bool         { return bool(v) }

// TestToolParamHeadersVisibility: a tool's mirrored arguments are given
// only to a principal who may see the tool; for anyone else the tool is
// as missing as one that does not exist, so its headers are never checked.
func TestToolParamHeadersVisibility(t *testing.T) {
	pr := &catalogtest.Provider{M: abi.Manifest{Name: "mirror", Version: "1.0.0", ABI: abi.Major,
		Tools: []abi.Tool{{Name: "mirrored", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)}}}}
	set, err := catalog.NewSet([]catalog.Provider{pr}, catalog.Options{Policy: hideToolsFrom("b")})
	if err != nil {
		t.Fatal(err)
	}
	want := []catalog.ParamHeader{{Header: "Region", Param: "region", Type: "string"}}
	tests := []struct {
		principal, tool string
		want            []catalog.ParamHeader
		visible         bool
	}{
		{"a", "mirrored", want, true},
		{"b", "mirrored", nil, false},
		{"a", "missing", nil, false},
		{"b", "missing", nil, false},
	}
	for _, tt := range tests {
		got, visible := set.ToolParamHeaders(abi.Principal{ID: tt.principal}, tt.tool)
		if visible != tt.visible || !cmp.Equal(got, tt.want) {
			t.Errorf("ToolParamHeaders(%s, %s) = %v, %v; want %v, %v", tt.principal, tt.tool, got, visible, tt.want, tt.visible)
		}
	}
}
