package auth

import (
	"fmt"
	"slices"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// Rule grants the principals it matches the visibility it lists. A rule
// matches a principal named in Principals or belonging to one of Groups
// ("*" in Principals matches everyone). Each list holds patterns in which
// "*" stands for any run of characters (slashes included); an empty list
// allows everything of that kind, so a rule with only Groups grants all.
type Rule struct {
	Principals []string
	Groups     []string
	Plugins    []string // plugin names
	Schemes    []string // URI schemes, lowercase
	Resources  []string // resource URIs
	Templates  []string // URI templates, as declared
	Prompts    []string // prompt names
	Tools      []string // tool names
}

// Policy is an ordered set of rules. A principal sees what the union of
// its matching rules allows; a principal no rule matches sees nothing.
// It implements catalog.Policy.
type Policy struct {
	rules []Rule
}

var _ catalog.Policy = (*Policy)(nil)

// NewPolicy validates rules and returns their Policy.
func NewPolicy(rules []Rule) (*Policy, error) {
	for i, r := range rules {
		if len(r.Principals) == 0 && len(r.Groups) == 0 {
			return nil, fmt.Errorf("auth: policy rule %d matches no principal or group", i)
		}
		for _, list := range [][]string{r.Principals, r.Groups, r.Plugins, r.Schemes, r.Resources, r.Templates, r.Prompts, r.Tools} {
			for _, pat := range list {
				if pat == "" {
					return nil, fmt.Errorf("auth: policy rule %d has an empty pattern", i)
				}
			}
		}
	}
	return &Policy{rules: slices.Clone(rules)}, nil
}

// View implements catalog.Policy.
func (pol *Policy) View(p abi.Principal) catalog.View {
	v := view{}
	for i := range pol.rules {
		r := &pol.rules[i]
		if slices.Contains(r.Principals, "*") || slices.Contains(r.Principals, p.ID) ||
			slices.ContainsFunc(p.Groups, func(g string) bool { return slices.Contains(r.Groups, g) }) {
			v = append(v, r)
		}
	}
	return v
}

// view is the rules matching one principal. A thing is visible when one
// rule allows all of it.
type view []*Rule

// allows reports whether patterns (empty: everything) match s.
func allows(patterns []string, s string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if Match(p, s) {
			return true
		}
	}
	return false
}

func (v view) Plugin(name string) bool {
	return slices.ContainsFunc(v, func(r *Rule) bool { return allows(r.Plugins, name) })
}

func (v view) Resource(plugin, scheme, template, uri string) bool {
	return slices.ContainsFunc(v, func(r *Rule) bool {
		return allows(r.Plugins, plugin) && allows(r.Schemes, scheme) && allows(r.Resources, uri) &&
			(template == "" || allows(r.Templates, template))
	})
}

func (v view) Template(plugin, scheme, template string) bool {
	return slices.ContainsFunc(v, func(r *Rule) bool {
		return allows(r.Plugins, plugin) && allows(r.Schemes, scheme) && allows(r.Templates, template)
	})
}

func (v view) Prompt(plugin, name string) bool {
	return slices.ContainsFunc(v, func(r *Rule) bool { return allows(r.Plugins, plugin) && allows(r.Prompts, name) })
}

func (v view) Tool(plugin, name string) bool {
	return slices.ContainsFunc(v, func(r *Rule) bool { return allows(r.Plugins, plugin) && allows(r.Tools, name) })
}

// Match reports whether s matches pattern, in which "*" stands for any run
// of bytes (including none and including "/"); everything else is literal.
// It runs in O(len(pattern)·len(s)) at worst.
func Match(pattern, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			starP, starS = px, sx
			px++
		case px < len(pattern) && pattern[px] == s[sx]:
			px++
			sx++
		case starP >= 0:
			px = starP + 1
			starS++
			sx = starS
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}
