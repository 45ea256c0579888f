package catalog

import "github.com/corral-mcp/corral/abi"

// URIVisible reports whether principal p may see the resource at uri: a
// provider of the Set owns its scheme and the Set's Policy (if any) lets p
// see it. Notification hubs use it to deliver resource updates only to
// those allowed to read the resource.
func (s *Set) URIVisible(p abi.Principal, uri string) bool {
	if s == nil {
		return false
	}
	scheme, err := ValidateURI(uri)
	if err != nil {
		return false
	}
	pr, ok := s.schemes[scheme]
	if !ok {
		return false
	}
	v := s.view(p)
	return v.Plugin(pr.name) && uriVisible(v, pr, uri)
}
