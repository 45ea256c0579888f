package registry

import (
	"slices"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
)

// Ungranted is a capability a plugin's manifest requests that the
// operator's settings do not grant.
type Ungranted struct {
	Capability string `json:"capability"`
	// Required says the manifest marks it required: the plugin cannot
	// work without it (abi.Manifest.RequiredCapabilities).
	Required bool `json:"required"`
	// Key is the setting that would grant it, e.g.
	// "plugin.files.grants.files".
	Key string `json:"key"`
}

// UngrantedOf lists, in manifest order, the capabilities m requests that s
// does not grant.
func UngrantedOf(m *abi.Manifest, s config.Plugin) []Ungranted {
	var out []Ungranted
	for _, c := range m.Capabilities {
		if s.Grants.Grants(c) {
			continue
		}
		out = append(out, Ungranted{Capability: c, Required: slices.Contains(m.RequiredCapabilities, c), Key: config.GrantKey(m.Name, c)})
	}
	return out
}

// logUngranted names, when a plugin starts, every capability it requests
// that the operator did not grant, and the key that would grant it.
func (r *Registry) logUngranted(l *loaded) {
	for _, u := range UngrantedOf(l.manifest, l.settings) {
		if u.Required {
			r.log.Error("plugin requires a capability the operator did not grant; the plugin cannot work without it",
				"file", l.path, "plugin", l.manifest.Name, "capability", u.Capability, "grant", u.Key)
			continue
		}
		r.log.Warn("plugin requests a capability the operator did not grant; calls to it are denied",
			"file", l.path, "plugin", l.manifest.Name, "capability", u.Capability, "grant", u.Key)
	}
}
