package catalog

import (
	"strings"

	"github.com/corral-mcp/corral/abi"
	"github.com/yosida95/uritemplate/v3"
)

// Policy decides what each principal may see. A Set with a Policy filters
// its lists, answers for anything hidden exactly as for something missing,
// and marks every answer private (cacheScope), since it depends on who
// asked. host/auth provides the configured implementation.
type Policy interface {
	// View returns what p may see. It is called once per request.
	View(p abi.Principal) View
}

// View is one principal's visibility. Each method judges one thing as a
// whole (its plugin, scheme, template and URI together), so a policy made
// of several rules cannot combine one rule's plugin with another's tool.
// Methods must be cheap and safe for concurrent use.
type View interface {
	// Plugin reports whether anything of the plugin may be visible; false
	// skips the plugin entirely.
	Plugin(name string) bool
	// Resource judges a concrete URI served by plugin; scheme is
	// lowercased and template is the plugin's template the URI matches,
	// "" when none. A template only narrows: what is refused with
	// template "" must be refused with any template, since the Set asks
	// with "" first and refuses the URI before matching its templates.
	Resource(plugin, scheme, template, uri string) bool
	// Template judges a URI template (as declared) of plugin.
	Template(plugin, scheme, template string) bool
	Prompt(plugin, name string) bool
	Tool(plugin, name string) bool
}

// allowAll is the View of a Set without a Policy.
type allowAll struct{}

func (allowAll) Plugin(string) bool                           { return true }
func (allowAll) Resource(string, string, string, string) bool { return true }
func (allowAll) Template(string, string, string) bool         { return true }
func (allowAll) Prompt(string, string) bool                   { return true }
func (allowAll) Tool(string, string) bool                     { return true }

func (s *Set) view(p abi.Principal) View {
	if s.opts.Policy == nil {
		return allowAll{}
	}
	if v := s.opts.Policy.View(p); v != nil {
		return v
	}
	return allowAll{}
}

// private says whether answers depend on who asked.
func (s *Set) private() bool { return s.opts.Authenticated || s.opts.Policy != nil }

// matchTemplate returns the first of pr's templates matching uri.
func (pr *provider) matchTemplate(uri string) (*template, uritemplate.Values) {
	for _, t := range pr.templates {
		if vals := t.tmpl.Match(uri); vals != nil {
			return t, vals
		}
	}
	return nil, nil
}

// uriVisible reports whether v may see uri served by pr.
func uriVisible(v View, pr *provider, uri string) bool {
	if _, all := v.(allowAll); all {
		return true // without a policy, no template to look up
	}
	scheme := schemeOf(uri)
	if !v.Resource(pr.name, scheme, "", uri) {
		return false // a template only narrows: no need to match one
	}
	t, _ := pr.matchTemplate(uri)
	return t == nil || v.Resource(pr.name, scheme, t.raw, uri)
}

// templateVisible reports whether v may see template t.
func templateVisible(v View, t *template) bool {
	colon := strings.IndexByte(t.raw, ':')
	if colon <= 0 {
		return false
	}
	return v.Template(t.owner.name, strings.ToLower(t.raw[:colon]), t.raw)
}

// Visible reports whether p may see uri: its scheme is served and the
// policy allows it. It says nothing about whether the resource exists.
// The protocol layer uses it to keep notifications about hidden resources
// from subscribers who may not see them.
func (s *Set) Visible(p abi.Principal, uri string) bool {
	pr, ok := s.schemes[schemeOf(uri)]
	if !ok {
		return s.opts.Policy == nil
	}
	return uriVisible(s.view(p), pr, uri)
}
