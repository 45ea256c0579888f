package registry

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
)

// This file decides which files may serve. Two rules make the decision
// independent of file names, directory order and load timing:
//
//   - binding: the configuration ties a plugin name to its bytes
//     (config.Binding: plugin.<name>.file, plugin.<name>.sha256). A file
//     declaring a bound name that the binding does not select is refused
//     and never instantiated, so it gets none of the name's grants.
//   - settlement: among the files that may serve, every claim (name,
//     scheme, template, prompt, tool) goes to one file or to none. A bound
//     file beats an unbound one; two bound files, or two unbound ones with
//     no bound rival, claiming one thing are all refused.
//
// Settlement looks only at the set of candidates (the newest loadable
// version of every file), so a restart, another replica or a hot add of
// the same files reaches the same outcome.

// bindCheck applies the configuration's binding to a compiled file whose
// manifest names the plugin name: nil when the file may run under that
// name (bound says whether a binding selected it), else why not.
func bindCheck(cfg *config.Config, idx *config.Bindings, path, digest, name string) (bound bool, err error) {
	if want := idx.BoundName(path, digest); want != "" && want != name {
		return false, fmt.Errorf("%w: plugin.%s binds this file, but its manifest names %q", config.ErrNotBound, want, name)
	}
	b := cfg.PluginSettings(name).Binding
	if err := b.Check(path, digest); err != nil {
		return false, fmt.Errorf("declares plugin %s but %w (plugin.%s); it gets none of that plugin's settings", name, err, name)
	}
	return b.Bound(), nil
}

// preBind applies the binding before compiling, from the file's path and
// digest alone. It returns the plugin name the configuration binds to the
// file ("" when only the manifest can tell), and an error when the file
// is bound to a name whose binding it does not match (a wrong digest).
func preBind(cfg *config.Config, idx *config.Bindings, path, digest string) (string, error) {
	name := idx.BoundName(path, digest)
	if name == "" {
		return "", nil
	}
	if err := cfg.PluginSettings(name).Binding.Check(path, digest); err != nil {
		return name, fmt.Errorf("plugin %s: %w", name, err)
	}
	return name, nil
}

// contender is a candidate for the served set, as settlement sees it.
type contender struct {
	path   string
	name   string
	bound  bool
	claims []catalog.Claim
}

// ConflictError says why settlement kept a file out of the served set: a
// claim it shares with other files.
type ConflictError struct {
	Claim catalog.Claim
	// With are the other files claiming it, by path, and their plugins.
	With    []string
	Plugins []string
	// Outcome is how the conflict was decided against the file.
	Outcome Outcome
}

// Outcome is how a claim conflict was decided against a file.
type Outcome int

// Outcomes of a claim conflict.
const (
	// LostToBound: a file the configuration binds claims it too.
	LostToBound Outcome = iota
	// BothBound: two bound files claim it; the bindings contradict each
	// other and neither serves.
	BothBound
	// NoneBound: several unbound files claim it; none serves until the
	// operator binds one (or removes the others).
	NoneBound
)

// Error implements error.
func (e *ConflictError) Error() string {
	var others []string
	for i, p := range e.With {
		others = append(others, fmt.Sprintf("plugin %s (%s)", e.Plugins[i], filepath.Base(p)))
	}
	what := fmt.Sprintf("%s %q", e.Claim.Kind, e.Claim.Value)
	switch e.Outcome {
	case LostToBound:
		return fmt.Sprintf("%s belongs to %s, which the configuration binds; this file is not bound", what, strings.Join(others, ", "))
	case BothBound:
		return fmt.Sprintf("%s is also claimed by %s; both are bound by the configuration, so neither is served", what, strings.Join(others, ", "))
	default:
		return fmt.Sprintf("%s is also claimed by %s; none is bound by the configuration, so none is served "+
			"(bind one with plugin.<name>.file or plugin.<name>.sha256)", what, strings.Join(others, ", "))
	}
}

// settle returns, for every contender that may not serve, why. Bound
// contenders are settled among themselves first; an unbound contender
// claiming anything a bound one claims loses; the unbound contenders left
// are then settled among themselves. No order of the input matters.
func settle(cs []*contender) map[string]error {
	refused := map[string]error{}
	var bound, unbound []*contender
	for _, c := range cs {
		if c.bound {
			bound = append(bound, c)
		} else {
			unbound = append(unbound, c)
		}
	}
	contest(bound, BothBound, refused)
	owners := claimants(bound)
	var left []*contender
	for _, c := range unbound {
		if cl, ps := firstShared(c, owners); ps != nil {
			refused[c.path] = conflict(cl, ps, LostToBound)
			continue
		}
		left = append(left, c)
	}
	contest(left, NoneBound, refused)
	return refused
}

// contest refuses every contender that shares a claim with another.
func contest(cs []*contender, o Outcome, refused map[string]error) {
	by := claimants(cs)
	for _, c := range cs {
		if cl, ps := firstShared(c, by); ps != nil {
			refused[c.path] = conflict(cl, ps, o)
		}
	}
}

// claimants indexes contenders by claim.
func claimants(cs []*contender) map[catalog.Claim][]*contender {
	by := make(map[catalog.Claim][]*contender, 6*len(cs))
	for _, c := range cs {
		for _, cl := range c.claims {
			by[cl] = append(by[cl], c)
		}
	}
	return by
}

// firstShared returns c's first claim (in manifest order) that another
// contender in by holds too, and those contenders sorted by path.
func firstShared(c *contender, by map[catalog.Claim][]*contender) (catalog.Claim, []*contender) {
	for _, cl := range c.claims {
		var others []*contender
		for _, o := range by[cl] {
			if o.path != c.path {
				others = append(others, o)
			}
		}
		if len(others) > 0 {
			slices.SortFunc(others, func(a, b *contender) int { return strings.Compare(a.path, b.path) })
			return cl, others
		}
	}
	return catalog.Claim{}, nil
}

func conflict(cl catalog.Claim, others []*contender, o Outcome) *ConflictError {
	e := &ConflictError{Claim: cl, Outcome: o}
	for _, c := range others {
		e.With = append(e.With, c.path)
		e.Plugins = append(e.Plugins, c.name)
	}
	return e
}

// Candidate is a compiled plugin file as settlement sees it.
type Candidate struct {
	Path     string
	Digest   string // sha256 of the file, lowercase hex
	Manifest *abi.Manifest
}

// Settle returns, for every candidate that may not serve under cfg, why:
// a binding it does not match (wrapping config.ErrNotBound) or a
// *ConflictError. Disabled candidates claim nothing. This is the decision
// the registry makes on every scan, exported for `corral plugin check`.
func Settle(cfg *config.Config, cands []Candidate) map[string]error {
	refused := map[string]error{}
	idx := cfg.Bindings()
	var cs []*contender
	for _, c := range cands {
		bound, err := bindCheck(cfg, idx, c.Path, c.Digest, c.Manifest.Name)
		if err != nil {
			refused[c.Path] = err
			continue
		}
		if !cfg.PluginSettings(c.Manifest.Name).Enabled {
			continue
		}
		cs = append(cs, &contender{path: c.Path, name: c.Manifest.Name, bound: bound, claims: catalog.Claims(c.Manifest)})
	}
	maps.Copy(refused, settle(cs))
	return refused
}
