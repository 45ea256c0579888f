package registry

import (
	"errors"
	"slices"
	"time"

	"github.com/corral-mcp/corral/host/config"
)

// Status is a snapshot of the registry, for /readyz and `corral plugin
// check`.
type Status struct {
	// Ready is Registry.Ready: the directory has been loaded and no file
	// fails for a host reason.
	Ready bool `json:"ready"`
	// Generation is the id of the Set being served.
	Generation string `json:"generation"`
	// LastReload is when the served set last changed or failed to.
	LastReload time.Time `json:"lastReload,omitzero"`
	// LastReloadOK says whether that attempt applied every change.
	LastReloadOK bool `json:"lastReloadOk"`
	// LastError is why it did not, if it did not.
	LastError string `json:"lastError,omitempty"`
	// Files lists every plugin file the registry knows, by path.
	Files []FileStatus `json:"files"`
}

// States of a plugin file.
const (
	StateServing  = "serving"  // the file's current content is serving
	StateDisabled = "disabled" // loaded, but disabled by configuration
	StateFailed   = "failed"   // the current content failed to load
	// StateRefused: the file loads but may not serve, because the
	// configuration binds its plugin name to another file, because its
	// signature does not satisfy the trust policy, or because of a claim
	// conflict settled against it (Error says which).
	StateRefused = "refused"
	StatePending = "pending" // the file is changing; not loaded yet
)

// FileStatus describes one plugin file.
type FileStatus struct {
	Path  string `json:"path"`
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// Plugin, Version and Digest describe the version serving (or
	// disabled) from this file, if any; after a failure it is the last
	// good version, still serving.
	Plugin  string    `json:"plugin,omitempty"`
	Version string    `json:"version,omitempty"`
	Digest  string    `json:"digest,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	// Signer is the trusted publisher whose signature the serving version
	// carries, "" when no trust policy applies to it.
	Signer string `json:"signer,omitempty"`
	// Binding is how the configuration binds the file's plugin:
	// "file", "sha256", "file+sha256", or "" when unbound.
	Binding string `json:"binding,omitempty"`
	// Conflict is set when a claim conflict keeps the file out.
	Conflict *Conflict `json:"conflict,omitempty"`
	// Ungranted lists the capabilities the serving plugin requests that
	// the operator does not grant, with the key that would grant each.
	Ungranted []Ungranted `json:"ungranted,omitempty"`
	// Life is the serving plugin's life-cycle state: "hot", "sleeping"
	// (no instance, no compiled code) or "waking".
	Life string `json:"life,omitempty"`
}

// Conflict is a claim a refused file shares with other files.
type Conflict struct {
	Claim string   `json:"claim"` // "name", "scheme", "template", "prompt" or "tool"
	Value string   `json:"value"`
	With  []string `json:"with"` // the other files claiming it
}

// Status returns a snapshot of the registry.
func (r *Registry) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{
		Ready:        r.Ready(),
		Generation:   r.cat.Current().Generation(),
		LastReload:   r.last.at,
		LastReloadOK: r.last.ok || r.last.at.IsZero(),
		LastError:    r.last.err,
	}
	cfg := r.cfg.Load()
	for path, f := range r.files {
		fs := FileStatus{Path: path}
		describe := func(l *loaded) {
			fs.Plugin, fs.Version, fs.Digest, fs.Since, fs.Signer = l.manifest.Name, l.manifest.Version, l.digest, l.since, l.signer
		}
		if l := r.serving[path]; l != nil {
			describe(l)
			fs.State = StateServing
			if l.plugin == nil {
				fs.State = StateDisabled
			} else {
				fs.Ungranted = UngrantedOf(l.manifest, l.settings)
				fs.Life = l.plugin.Life()
			}
		}
		var ce *ConflictError
		switch {
		case f.failure != nil && (errors.Is(f.failure, config.ErrNotBound) || refusedByTrust(f.failure)):
			fs.State, fs.Error = StateRefused, f.failure.Error()
		case f.failure != nil:
			fs.State, fs.Error = StateFailed, f.failure.Error()
		case f.refusal != nil:
			fs.State, fs.Error = StateRefused, f.refusal.Error()
			if l := r.held[path]; l != nil {
				describe(l)
			}
			if errors.As(f.refusal, &ce) {
				fs.Conflict = &Conflict{Claim: ce.Claim.Kind, Value: ce.Claim.Value, With: ce.With}
			}
		case f.skipped != "":
			fs.State, fs.Plugin, fs.Digest = StateDisabled, f.skipped, f.digest
		case fs.State == "":
			fs.State = StatePending
		}
		if fs.Plugin != "" {
			fs.Binding = bindingKind(cfg.PluginSettings(fs.Plugin).Binding)
		}
		st.Files = append(st.Files, fs)
	}
	slices.SortFunc(st.Files, func(a, b FileStatus) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	return st
}

// bindingKind names how b binds a plugin, for FileStatus.Binding.
func bindingKind(b config.Binding) string {
	switch {
	case b.File != "" && b.SHA256 != "":
		return "file+sha256"
	case b.File != "":
		return "file"
	case b.SHA256 != "":
		return "sha256"
	}
	return ""
}

// Failed returns the files whose current content failed to load or was
// refused.
func (s Status) Failed() []FileStatus {
	var out []FileStatus
	for _, f := range s.Files {
		if f.State == StateFailed || f.State == StateRefused {
			out = append(out, f)
		}
	}
	return out
}
