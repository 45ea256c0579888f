package registry

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/trust"
)

// This file applies the trust policy (host/trust) on the load path: the
// signatures beside a file are checked against the policy of the plugin
// the configuration binds the file to (else plugins.trust) before the
// bytes are compiled, on every load: at start, on a hot reload, and when
// the compilation cache would answer without compiling. Once the
// manifest names the plugin, its own policy is applied too if it is
// another. A refused file serves nothing, not even an earlier version.

// fileStamp identifies a version of one file without reading it; the
// zero fileStamp is a missing file.
type fileStamp struct {
	size  int64
	mtime time.Time
}

// stampOf returns the stamp of the plugin file described by fi at path,
// with the signature files beside it: a signature added, replaced or
// removed is a new version of the plugin, checked again.
func stampOf(path string, fi os.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime()}
	for i, suffix := range []string{trust.MinisigSuffix, trust.BundleSuffix} {
		if si, err := os.Stat(path + suffix); err == nil && si.Mode().IsRegular() {
			st.sigs[i] = fileStamp{si.Size(), si.ModTime()}
		}
	}
	return st
}

// policies returns the compiled trust policies of cfg, compiled once per
// configuration.
func (r *Registry) policies(cfg *config.Config) (*trust.Policies, error) {
	r.trustMu.Lock()
	defer r.trustMu.Unlock()
	if r.trustCfg != cfg {
		r.trustCfg = cfg
		r.trustPols, r.trustErr = trust.ForConfig(cfg)
	}
	return r.trustPols, r.trustErr
}

// TrustCheck checks one plugin file's bytes against a configuration's
// trust policies, as the registry does on every load: Check("") (or with
// the name the configuration binds the file to) before compiling, then
// Check with the manifest's name.
type TrustCheck struct {
	pols    *trust.Policies
	data    []byte
	digest  string
	sigs    trust.Signatures
	checked *trust.Policy // the policy already applied
	signer  string
}

// NewTrustCheck reads the signatures beside path when some policy is set;
// digest is the sha256 (lowercase hex) of data.
func NewTrustCheck(pols *trust.Policies, path string, data []byte, digest string) (*TrustCheck, error) {
	c := &TrustCheck{pols: pols, data: data, digest: digest}
	if pols.Any() {
		var err error
		if c.sigs, err = trust.ReadSiblings(path); err != nil {
			return nil, fmt.Errorf("%w: %w", plugin.ErrHost, err)
		}
	}
	return c, nil
}

// Check applies the policy of the plugin name ("" before the manifest is
// known, when the configuration does not bind the file: Policies.Unknown)
// unless it was applied already. A refusal wraps trust.ErrRefused.
func (c *TrustCheck) Check(name string) error {
	p := c.pols.For(name)
	if name == "" {
		p = c.pols.Unknown()
	}
	want := c.pols.Signer(name)
	if p == nil && want != "" {
		return fmt.Errorf("plugin %s: %w: it must be signed by %s (plugin.%s.signer), but no trust policy applies to it", name, trust.ErrRefused, want, name)
	}
	if p == nil || p == c.checked {
		return c.requireSigner(name, want)
	}
	signer, err := p.Verify(c.data, c.digest, c.sigs)
	if err != nil {
		if name == "" {
			return fmt.Errorf("refused by plugins.trust: %w", err)
		}
		return fmt.Errorf("plugin %s: refused by its trust policy: %w", name, err)
	}
	c.checked, c.signer = p, signer
	return c.requireSigner(name, want)
}

// requireSigner refuses a file signed by a trusted publisher other than
// the one its plugin must be signed by.
func (c *TrustCheck) requireSigner(name, want string) error {
	if want == "" || c.signer == want {
		return nil
	}
	return fmt.Errorf("plugin %s: %w: signed by %s, but it must be signed by %s (plugin.%s.signer, as the lock records it)", name, trust.ErrRefused, c.signer, want, name)
}

// Signer is the trusted publisher whose signature the last passing Check
// verified, "" when no policy applied.
func (c *TrustCheck) Signer() string { return c.signer }

// refusedByTrust reports whether err is a trust refusal: the file serves
// nothing until its signature or the policy changes.
func refusedByTrust(err error) bool { return errors.Is(err, trust.ErrRefused) }
