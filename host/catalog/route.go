package catalog

import "github.com/corral-mcp/corral/abi"

// Target kinds for Route.
const (
	TargetURI    = "uri"
	TargetPrompt = "prompt"
	TargetTool   = "tool"
)

// Route names the plugin a request for target would reach: the owner of
// a URI's scheme, of a prompt or of a tool (kind TargetURI, TargetPrompt,
// TargetTool), and whether the policy lets p see it. ok is false when no
// plugin claims target. It is for the operator's records (the audit log):
// a client is never told the difference between hidden and missing.
func (s *Set) Route(p abi.Principal, kind, target string) (plugin string, visible, ok bool) {
	switch kind {
	case TargetURI:
		pr, ok := s.schemes[schemeOf(target)]
		if !ok {
			return "", false, false
		}
		return pr.name, uriVisible(s.view(p), pr, target), true
	case TargetPrompt:
		ref, ok := s.prompts[target]
		if !ok {
			return "", false, false
		}
		return ref.owner.name, s.view(p).Prompt(ref.owner.name, target), true
	case TargetTool:
		pr, ok := s.tools[target]
		if !ok {
			return "", false, false
		}
		return pr.name, s.view(p).Tool(pr.name, target), true
	}
	return "", false, false
}
