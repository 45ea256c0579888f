package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// ParamHeader is a tool argument that clients mirror into an HTTP header
// (`Mcp-Param-{Header}`) because its inputSchema property carries an
// `x-mcp-header` annotation (MCP 2026-07-28, Streamable HTTP §custom
// headers). The HTTP transport checks the header against the body.
type ParamHeader struct {
	Header string // the name after "Mcp-Param-"
	Param  string // the argument's property name
	Type   string // "string", "integer" or "boolean"
}

// ToolParamHeaders returns the mirrored arguments of the named tool, in a
// stable order, and whether p may see the tool. For a tool p may not see
// it returns nil and false, as for one that does not exist: its headers
// must not be checked, or the check would tell p that the tool exists.
func (s *Set) ToolParamHeaders(p abi.Principal, name string) ([]ParamHeader, bool) {
	v := s.view(p) // taken for a missing tool too: hidden costs what missing does
	pr, ok := s.tools[name]
	if !ok || !v.Tool(pr.name, name) {
		return nil, false
	}
	return s.toolHeaders[name], true
}

// paramHeaders reads the x-mcp-header annotations of a tool's inputSchema.
// An annotation that clients would reject (empty, not an HTTP token, on a
// non-primitive or number property, duplicated case-insensitively) makes
// the tool invalid, so the plugin does not load with it.
func paramHeaders(schema json.RawMessage) ([]ParamHeader, error) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := jsonread.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []ParamHeader
	seen := map[string]string{}
	for param, raw := range s.Properties {
		var p struct {
			Type   any     `json:"type"`
			Header *string `json:"x-mcp-header"`
		}
		err := jsonread.Unmarshal(raw, &p)
		var me *jsonread.MemberError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("inputSchema: property %q: %w", param, err)
		}
		if err != nil || p.Header == nil {
			continue
		}
		h := *p.Header
		if !isToken(h) {
			return nil, fmt.Errorf("property %q: x-mcp-header %q is not an HTTP header token", param, h)
		}
		typ, _ := p.Type.(string)
		if typ != "string" && typ != "integer" && typ != "boolean" {
			return nil, fmt.Errorf("property %q: x-mcp-header needs a string, integer or boolean property", param)
		}
		if other, dup := seen[strings.ToLower(h)]; dup {
			return nil, fmt.Errorf("properties %q and %q both mirror into x-mcp-header %q", other, param, h)
		}
		seen[strings.ToLower(h)] = param
		out = append(out, ParamHeader{Header: h, Param: param, Type: typ})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Param < out[j].Param })
	return out, nil
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
