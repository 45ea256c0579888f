package plugin

import (
	"slices"

	"github.com/corral-mcp/corral/abi"
)

// logUngranted logs, the first time only, that a call to capability was
// denied because the manifest does not request it or the operator does not
// grant it, naming the setting that would grant it. Later denials are only
// counted (Observer.Denied), so a guest calling in a loop cannot flood the
// log. Nothing of this reaches the client.
func (p *Plugin) logUngranted(capability string) {
	i := slices.Index(abi.Capabilities[:], capability)
	if i < 0 || p.ungranted[i].Swap(true) {
		return
	}
	if !slices.Contains(p.manifest.Capabilities, capability) {
		p.log.Warn("plugin called a capability its manifest does not request; denied", "capability", capability)
		return
	}
	p.log.Warn("plugin called a capability the operator did not grant; denied", "capability", capability,
		"grant", p.cfg.GrantKeys[capability])
}
