package trust

import (
	"fmt"
	"maps"
	"slices"

	"github.com/corral-mcp/corral/host/config"
)

// Policies are the compiled trust policies of one configuration: the
// global one (plugins.trust) and those of plugin entries that set their
// own (plugin.<name>.trust).
type Policies struct {
	global *Policy
	byName map[string]*Policy
	any    *Policy // a publisher of any policy, when the global one is set
	signer map[string]string
}

// ForConfig compiles every policy of cfg.
func ForConfig(cfg *config.Config) (*Policies, error) {
	g, err := Compile(cfg.Plugins.Trust)
	if err != nil {
		return nil, fmt.Errorf("plugins.trust: %w", err)
	}
	ps := &Policies{global: g, byName: map[string]*Policy{}, signer: map[string]string{}}
	for name, p := range cfg.Plugin {
		if p.Signer != "" {
			ps.signer[name] = p.Signer
		}
		if !p.Trust.Set() {
			continue
		}
		if ps.byName[name], err = Compile(p.Trust); err != nil {
			return nil, fmt.Errorf("plugin.%s.trust: %w", name, err)
		}
	}
	if g != nil {
		all := []*Policy{g}
		for _, name := range slices.Sorted(maps.Keys(ps.byName)) {
			all = append(all, ps.byName[name])
		}
		ps.any = union(all)
	}
	return ps, nil
}

// For returns the policy of the plugin named name (config.TrustFor), nil
// when none applies.
func (ps *Policies) For(name string) *Policy {
	if p, ok := ps.byName[name]; ok {
		return p
	}
	return ps.global
}

// Unknown returns the policy a file must satisfy before its plugin is
// known (before the manifest names it, when the configuration binds the
// file to no name): with a global policy, every plugin is under one, so
// the file needs a signature by a publisher of some policy (its own
// plugin's is applied once the manifest names it). Without a global
// policy, an unsigned file may be a plugin with no policy: Unknown
// returns nil and only the manifest's plugin's policy applies.
func (ps *Policies) Unknown() *Policy { return ps.any }

// Signer returns the publisher the plugin named name must be signed by
// (plugin.<name>.signer, as a lock records it), "" when any its policy
// trusts will do.
func (ps *Policies) Signer(name string) string { return ps.signer[name] }

// Any reports whether some policy is set, so that signatures need to be
// read at all.
func (ps *Policies) Any() bool { return ps.global != nil || len(ps.byName) > 0 || len(ps.signer) > 0 }
