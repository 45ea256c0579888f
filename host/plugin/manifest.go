package plugin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)
)

// parseManifest decodes and validates the describe response. Unknown
// capability names are reported in unknown and dropped, so that a guest
// built for a newer minor still loads.
func parseManifest(b []byte) (m *abi.Manifest, unknown []string, err error) {
	// The strict reader: valid UTF-8 also in the raw members (schemas,
	// annotations, icons) that clients receive, no repeated or
	// case-folded member names, nothing after the object.
	m, err = decodeManifest(b)
	if err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	var problems []string
	if !nameRE.MatchString(m.Name) {
		problems = append(problems, fmt.Sprintf("name %q does not match [a-z0-9][a-z0-9_-]{0,63}", m.Name))
	}
	if m.ABI != abi.Major {
		problems = append(problems, fmt.Sprintf("abi is %d, this host speaks %d", m.ABI, abi.Major))
	}
	seen := map[string]bool{}
	for _, s := range m.Schemes {
		switch {
		case len(s) > 64 || !schemeRE.MatchString(s):
			problems = append(problems, fmt.Sprintf("scheme %q is not a lowercase RFC 3986 scheme", s))
		case seen[s]:
			problems = append(problems, fmt.Sprintf("scheme %q listed twice", s))
		}
		seen[s] = true
	}
	inSchemes := func(uri string) bool {
		i := strings.IndexByte(uri, ':')
		return i > 0 && slices.Contains(m.Schemes, strings.ToLower(uri[:i]))
	}
	for _, r := range m.Resources {
		if r.Name == "" {
			problems = append(problems, fmt.Sprintf("resource %q has no name", r.URI))
		}
		if !inSchemes(r.URI) {
			problems = append(problems, fmt.Sprintf("resource %q is outside the plugin's schemes", r.URI))
		}
	}
	for _, t := range m.Templates {
		if t.Name == "" {
			problems = append(problems, fmt.Sprintf("template %q has no name", t.URITemplate))
		}
		if !inSchemes(t.URITemplate) {
			problems = append(problems, fmt.Sprintf("template %q is outside the plugin's schemes", t.URITemplate))
		}
	}
	names := map[string]bool{}
	for _, p := range m.Prompts {
		if p.Name == "" || names["p:"+p.Name] {
			problems = append(problems, fmt.Sprintf("prompt name %q is empty or listed twice", p.Name))
		}
		names["p:"+p.Name] = true
	}
	for _, t := range m.Tools {
		if t.Name == "" || names["t:"+t.Name] {
			problems = append(problems, fmt.Sprintf("tool name %q is empty or listed twice", t.Name))
		}
		names["t:"+t.Name] = true
		if len(t.InputSchema) == 0 || t.InputSchema[0] != '{' {
			problems = append(problems, fmt.Sprintf("tool %q has no inputSchema object", t.Name))
		}
	}
	var caps []string
	for _, c := range m.Capabilities {
		switch {
		case !slices.Contains(abi.Capabilities[:], c):
			unknown = append(unknown, c)
		case !slices.Contains(caps, c):
			caps = append(caps, c)
		}
	}
	m.Capabilities = caps
	var required []string
	for _, c := range m.RequiredCapabilities {
		switch {
		case !slices.Contains(abi.Capabilities[:], c):
			if !slices.Contains(unknown, c) {
				unknown = append(unknown, c)
			}
		case !slices.Contains(caps, c):
			problems = append(problems, fmt.Sprintf("required capability %q is not in capabilities", c))
		case !slices.Contains(required, c):
			required = append(required, c)
		}
	}
	m.RequiredCapabilities = required
	if len(problems) > 0 {
		return nil, nil, fmt.Errorf("manifest: %s", strings.Join(problems, "; "))
	}
	return m, unknown, nil
}
