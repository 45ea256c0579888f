package catalog

import (
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// Claim is one thing a provider owns exclusively within a Set: its name, a
// URI scheme, a URI template, a prompt or a tool. Two providers of one Set
// never share a Claim; NewSet refuses them with a *ConflictError naming
// the same Kind and Value.
type Claim struct {
	Kind  string // "name", "scheme", "template", "prompt" or "tool"
	Value string // the name, the lowercased scheme, the template as declared
}

// Claims returns everything m claims exclusively, in manifest order, so a
// caller can settle conflicts between providers before building a Set.
func Claims(m *abi.Manifest) []Claim {
	cs := []Claim{{"name", m.Name}}
	for _, sc := range m.Schemes {
		cs = append(cs, Claim{"scheme", strings.ToLower(sc)})
	}
	for _, t := range m.Templates {
		cs = append(cs, Claim{"template", t.URITemplate})
	}
	for _, p := range m.Prompts {
		cs = append(cs, Claim{"prompt", p.Name})
	}
	for _, t := range m.Tools {
		cs = append(cs, Claim{"tool", t.Name})
	}
	return cs
}
