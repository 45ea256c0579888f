package config

import (
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/abi"
)

// Binding ties a plugin name to the bytes allowed to run under it, so that
// the settings and grants of plugin.<name> go to the file the operator
// meant and to no other file that declares the same name. It is checked
// before a file is compiled wherever the file alone decides it (its path,
// its digest) and again once the manifest names the plugin.
//
// A zero Binding binds nothing: any file whose manifest declares the name
// is a claimant, and the name goes to it only when it is the only one.
type Binding struct {
	// File is the plugin file's path (absolute after loading; a relative
	// path in the file resolves against the file's directory).
	File string `koanf:"file"`
	// SHA256 is the lowercase hex digest the file must have.
	SHA256 string `koanf:"sha256"`
	// Source is where the plugin comes from instead of a file of the
	// directory: oci://REGISTRY/REPO@sha256:… (or :TAG). host/oci resolves
	// it to the file its store keeps, setting File and SHA256.
	Source string `koanf:"source"`
	// Signer, when set, is the publisher whose signature the file must
	// carry under the trust policy ("minisign:RW…", as a lock records it).
	Signer string `koanf:"signer"`
}

// Bound reports whether b binds anything.
func (b Binding) Bound() bool { return b != Binding{} }

// ErrNotBound is wrapped by the errors of Binding.Check.
var ErrNotBound = errors.New("does not match the binding")

// Check reports whether the file at path with the given digest is the one
// b selects: nil when it is (or b binds nothing), else an error wrapping
// ErrNotBound that says what differs.
func (b Binding) Check(path, digest string) error {
	if b.Source != "" && b.File == "" {
		return fmt.Errorf("%w: its source %s is not resolved to a file", ErrNotBound, b.Source)
	}
	if b.File != "" && b.File != path {
		return fmt.Errorf("%w: the binding names the file %s", ErrNotBound, b.File)
	}
	if b.SHA256 != "" && b.SHA256 != digest {
		return fmt.Errorf("%w: the file's sha256 is %s, the binding pins %s", ErrNotBound, digest, b.SHA256)
	}
	return nil
}

// Bindings indexes a configuration's bindings by file and by digest, to
// look up many files against one configuration.
type Bindings struct {
	byFile   map[string]string // plugin.<name>.file → name
	byDigest map[string]string // sha256 of an entry with no file → name ("" when several)
	// For MayBind: the bindings naming each file, the sha256 pins of
	// entries with no file, and whether an entry with no file pins no
	// digest either (a signer alone).
	fileBindings map[string][]Binding
	filelessSHA  map[string]bool
	filelessAny  bool
	unresolved   bool // an entry with a source not yet resolved to a file
	probe        Plugin
}

// Bindings returns the index of c's bindings.
func (c *Config) Bindings() *Bindings {
	b := &Bindings{byFile: map[string]string{}, byDigest: map[string]string{},
		fileBindings: map[string][]Binding{}, filelessSHA: map[string]bool{}, probe: c.ProbeSettings("")}
	for name, p := range c.Plugin {
		switch bd := p.Binding; {
		case !bd.Bound():
		case bd.File != "":
			b.fileBindings[bd.File] = append(b.fileBindings[bd.File], bd)
		case bd.Source != "":
			b.unresolved = true
		case bd.SHA256 != "":
			b.filelessSHA[bd.SHA256] = true
		default:
			b.filelessAny = true
		}
		switch {
		case p.File != "":
			b.byFile[p.File] = name
		case p.SHA256 != "":
			if _, dup := b.byDigest[p.SHA256]; dup {
				b.byDigest[p.SHA256] = "" // two names pin these bytes: only the manifest can tell
			} else {
				b.byDigest[p.SHA256] = name
			}
		}
	}
	return b
}

// MayBind reports whether an entry may bind the file at path whose content
// has digest ("" while it is not yet hashed): its binding selects the
// file (Binding.Check), or may once the digest is known. It costs the
// same however many entries the configuration has.
func (b *Bindings) MayBind(path, digest string) bool {
	if digest == "" {
		return len(b.fileBindings[path]) > 0 || b.unresolved || len(b.filelessSHA) > 0 || b.filelessAny
	}
	for _, bd := range b.fileBindings[path] {
		if bd.Check(path, digest) == nil {
			return true
		}
	}
	return b.filelessAny || b.filelessSHA[digest]
}

// Probe is the configuration's ProbeSettings for a file no entry binds,
// computed once.
func (b *Bindings) Probe() Plugin { return b.probe }

// BoundName returns the plugin the configuration binds to the file at path
// with digest before the file is compiled: the entry whose file is path,
// else the only entry with no file whose sha256 is digest. It returns ""
// when the file's name can be known only from its manifest.
func (b *Bindings) BoundName(path, digest string) string {
	if name, ok := b.byFile[path]; ok {
		return name
	}
	return b.byDigest[digest]
}

// ProbeSettings returns the settings under which a file is first
// instantiated, to run its initialization and describe it, before its
// manifest names the plugin: those of bound, the plugin the configuration
// binds to the file (Bindings.BoundName), else, when bound is "", the
// settings of a plugin with no entry with the largest timeout and memory
// any plugin entry sets,
// so that no configured plugin fails to start under a budget smaller than
// its own. Grants do not apply to that first instance.
func (c *Config) ProbeSettings(bound string) Plugin {
	if bound != "" {
		return c.PluginSettings(bound)
	}
	p := c.defaultPlugin()
	for _, e := range c.Plugin {
		p.Limits.Timeout = max(p.Limits.Timeout, e.Limits.Timeout)
		p.Limits.MemoryPages = max(p.Limits.MemoryPages, e.Limits.MemoryPages)
	}
	return p
}

// GrantKey returns the key below plugin.<name> that grants capability,
// e.g. "plugin.files.grants.files", or "" for an unknown capability.
func GrantKey(name, capability string) string {
	k, ok := grantKeys[capability]
	if !ok {
		return ""
	}
	return "plugin." + name + "." + k
}

var grantKeys = map[string]string{
	abi.CapLog:    "grants.log",
	abi.CapNotify: "grants.notify",
	abi.CapKV:     "grants.kv",
	abi.CapFiles:  "grants.files",
	abi.CapHTTP:   "grants.http.hosts",
	abi.CapConfig: "grants.config",
}

// Grants reports whether g grants capability (with at least one root,
// host or value where the capability needs them).
func (g Grants) Grants(capability string) bool {
	switch capability {
	case abi.CapLog:
		return g.Log
	case abi.CapNotify:
		return g.Notify
	case abi.CapKV:
		return g.KV
	case abi.CapFiles:
		return len(g.Files) > 0
	case abi.CapHTTP:
		return len(g.HTTP.Hosts) > 0
	case abi.CapConfig:
		return len(g.Config) > 0
	}
	return false
}
