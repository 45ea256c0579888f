package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// Resolver binds plugin sources to the modules its store keeps.
type Resolver struct {
	Client *Client
	Store  *Store
	// Log receives what resolving did (a pull, a tag followed, a registry
	// unreachable); nil discards it.
	Log *slog.Logger
}

// NewResolver returns the resolver cfg configures (plugins.store,
// plugins.oci).
func NewResolver(cfg *config.Config, log *slog.Logger) (*Resolver, error) {
	st, err := OpenStore(cfg.Plugins.Store)
	if err != nil {
		return nil, err
	}
	o := cfg.Plugins.OCI
	return &Resolver{Store: st, Log: log, Client: &Client{Username: o.Username, Password: o.Password,
		DockerConfig: o.DockerConfig, PlainHTTP: o.PlainHTTP}}, nil
}

// Bind returns the configuration derived from cfg in which every plugin
// with a source is bound to the module the store keeps for it (its file
// and sha256 set), pulling what the store lacks. With a lock
// (plugins.lock) the lock's plugins are the only ones with a source, each
// pinned to the lock's digest and signer. A plugin whose source cannot be
// resolved is bound to a file that does not exist, so that it serves
// nothing and no other file serves in its name; the errors are returned
// joined, with the configuration.
func (r *Resolver) Bind(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	c := *cfg
	c.Plugin = maps.Clone(cfg.Plugin)
	if c.Plugin == nil {
		c.Plugin = map[string]config.Plugin{}
	}
	var lock *Lock
	if cfg.Plugins.Lock != "" {
		var err error
		if lock, err = ReadLock(cfg.Plugins.Lock); err != nil {
			return nil, err
		}
		for name, p := range c.Plugin {
			p.Source, p.FollowTag = "", false // only the lock's sources
			c.Plugin[name] = p
		}
		for name, e := range lock.Plugins {
			p := cfg.PluginSettings(name)
			p.Source, p.FollowTag, p.Signer, p.File, p.SHA256 = e.Source, false, e.Signer, "", ""
			c.Plugin[name] = p
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Plugin)) {
		p := c.Plugin[name]
		if p.Source == "" {
			continue
		}
		path, moduleHex, err := r.bindOne(ctx, name, p)
		if err == nil && lock != nil && "sha256:"+moduleHex != lock.Plugins[name].Module {
			err = fmt.Errorf("plugin %s: the module of %s has sha256 %s, the lock pins %s", name, p.Source, moduleHex, lock.Plugins[name].Module)
		}
		if err != nil {
			errs = append(errs, err)
			path, moduleHex = filepath.Join(r.Store.Dir(), "unresolved", name+".wasm"), ""
		}
		p.File, p.SHA256 = path, moduleHex
		c.Plugin[name] = p
	}
	return &c, errors.Join(errs...)
}

// bindOne resolves one plugin's source to a module in the store.
func (r *Resolver) bindOne(ctx context.Context, name string, p config.Plugin) (path, moduleHex string, err error) {
	ref, err := ParseSource(p.Source)
	if err != nil {
		return "", "", fmt.Errorf("plugin %s: %w", name, err)
	}
	if ref.Digest != "" {
		return r.fetch(ctx, name, ref)
	}
	// By tag: the digest recorded when it was first resolved, unless the
	// plugin follows the tag.
	recorded := r.Store.Tag(ref)
	if recorded != "" && !p.FollowTag {
		ref.Digest = recorded
		return r.fetch(ctx, name, ref)
	}
	now, err := r.Client.Resolve(ctx, ref)
	if err != nil {
		if recorded == "" {
			return "", "", fmt.Errorf("plugin %s: %w", name, err)
		}
		r.log().Warn("registry unreachable; serving the digest recorded for the tag", "plugin", name, "source", ref.String(), "digest", recorded, "err", err)
		ref.Digest = recorded
		return r.fetch(ctx, name, ref)
	}
	at := ref
	at.Digest = now
	path, moduleHex, err = r.fetch(ctx, name, at)
	if err != nil && recorded != "" && recorded != now {
		// The tag moved to something that does not pull (or does not
		// match its digest): the copy kept for the recorded digest serves.
		r.log().Error("the tag's new digest does not pull; serving the stored copy of the recorded one", "plugin", name,
			"source", ref.String(), "recorded", recorded, "now", now, "err", err)
		ref.Digest = recorded
		return r.fetch(ctx, name, ref)
	}
	if err != nil {
		return "", "", err
	}
	if recorded != "" && recorded != now {
		r.log().Info("tag moved; following it (plugin.<name>.followTag)", "plugin", name, "source", ref.String(), "was", recorded, "now", now)
	}
	if err := r.Store.RecordTag(ref, now); err != nil {
		return "", "", fmt.Errorf("plugin %s: %w", name, err)
	}
	return path, moduleHex, nil
}

// fetch returns the stored module of ref's digest, pulling it first if the
// store does not have it. Nothing is stored unless every byte matches its
// digest.
func (r *Resolver) fetch(ctx context.Context, name string, ref Reference) (path, moduleHex string, err error) {
	if path, moduleHex, ok := r.Store.Lookup(ref.Digest); ok {
		return path, moduleHex, nil
	}
	a, err := r.Client.Pull(ctx, ref)
	if err != nil {
		return "", "", fmt.Errorf("plugin %s: %w", name, err)
	}
	if path, err = r.Store.Put(a); err != nil {
		return "", "", fmt.Errorf("plugin %s: %w", name, err)
	}
	r.log().Info("plugin pulled", "plugin", name, "source", ref.String(), "module", a.ModuleDigest,
		"signed", !a.Signatures.Empty())
	return path, strings.TrimPrefix(a.ModuleDigest, "sha256:"), nil
}

func (r *Resolver) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Lock is a plugin lock file: the deployed set, by plugin name.
type Lock struct {
	Version int                  `json:"version"`
	Plugins map[string]LockEntry `json:"plugins"`
}

// LockEntry pins one plugin.
type LockEntry struct {
	// Source is oci://REGISTRY/REPO@sha256:… (the manifest digest).
	Source string `json:"source"`
	// Tag is the tag the digest was resolved from, for people; "" when
	// the configuration pinned the digest.
	Tag string `json:"tag,omitempty"`
	// Module is the sha256 of the module ("sha256:…").
	Module string `json:"module"`
	// Signer is the publisher whose signature the module must carry, ""
	// when no trust policy applied when the lock was written.
	Signer string `json:"signer,omitempty"`
}

// lockVersion is the version of the lock format.
const lockVersion = 1

// ReadLock reads and checks a lock file.
func ReadLock(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oci: lock: %w", err)
	}
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("oci: lock %s: %w", path, err)
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("oci: lock %s: version %d, want %d", path, l.Version, lockVersion)
	}
	for name, e := range l.Plugins {
		ref, err := ParseSource(e.Source)
		switch {
		case err != nil:
			return nil, fmt.Errorf("oci: lock %s: plugin %s: %w", path, name, err)
		case ref.Digest == "":
			return nil, fmt.Errorf("oci: lock %s: plugin %s: the source %s is not pinned by digest", path, name, e.Source)
		case !strings.HasPrefix(e.Module, "sha256:") || !isHex64(strings.TrimPrefix(e.Module, "sha256:")):
			return nil, fmt.Errorf("oci: lock %s: plugin %s: module %q is not a sha256 digest", path, name, e.Module)
		}
	}
	return &l, nil
}

// Write writes the lock to path (atomically).
func (l *Lock) Write(path string) error {
	l.Version = lockVersion
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("oci: lock: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("oci: lock: %w", err)
	}
	return nil
}
