package registry

import (
	"slices"
	"time"
)

// Status is a snapshot of the registry, for /readyz and `corral plugin
// check`.
type Status struct {
	// Ready is true once the directory has been loaded (see Registry.Ready).
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
	StatePending  = "pending"  // the file is changing; not loaded yet
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
}

// Status returns a snapshot of the registry.
func (r *Registry) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{
		Ready:        r.ready.Load(),
		Generation:   r.cat.Current().Generation(),
		LastReload:   r.last.at,
		LastReloadOK: r.last.ok || r.last.at.IsZero(),
		LastError:    r.last.err,
	}
	for path, f := range r.files {
		fs := FileStatus{Path: path}
		if l := r.serving[path]; l != nil {
			fs.Plugin, fs.Version, fs.Digest, fs.Since = l.manifest.Name, l.manifest.Version, l.digest, l.since
			fs.State = StateServing
			if l.plugin == nil {
				fs.State = StateDisabled
			}
		}
		switch {
		case f.failure != nil:
			fs.State, fs.Error = StateFailed, f.failure.Error()
		case f.pending && fs.State == "":
			fs.State = StatePending
		case fs.State == "":
			fs.State = StatePending
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

// Failed returns the files whose current content failed to load.
func (s Status) Failed() []FileStatus {
	var out []FileStatus
	for _, f := range s.Files {
		if f.State == StateFailed {
			out = append(out, f)
		}
	}
	return out
}
