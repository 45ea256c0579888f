package oci

import (
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"
)

// Scheme prefixes a plugin source in the configuration.
const Scheme = "oci://"

// Reference is a parsed source: a registry, a repository and either a
// manifest digest or a tag.
type Reference struct {
	Registry   string // host[:port]
	Repository string
	Tag        string // "" when pinned by digest only
	Digest     string // "sha256:…"; "" while only a tag is known
}

// ParseSource parses "oci://REGISTRY/REPO@sha256:…" or "oci://REGISTRY/REPO:TAG"
// (a bare "REGISTRY/REPO…" is accepted too).
func ParseSource(src string) (Reference, error) {
	s := strings.TrimPrefix(src, Scheme)
	r, err := registry.ParseReference(s)
	if err != nil {
		return Reference{}, fmt.Errorf("oci: source %q: %w", src, err)
	}
	ref := Reference{Registry: r.Registry, Repository: r.Repository}
	if d, err := r.Digest(); err == nil {
		if d.Algorithm() != digest.SHA256 {
			return Reference{}, fmt.Errorf("oci: source %q: only sha256 digests are accepted", src)
		}
		ref.Digest = d.String()
	} else if r.Reference != "" {
		ref.Tag = r.Reference
	} else {
		return Reference{}, fmt.Errorf("oci: source %q names no tag or digest (add :TAG or @sha256:…)", src)
	}
	return ref, nil
}

// Repo is REGISTRY/REPO.
func (r Reference) Repo() string { return r.Registry + "/" + r.Repository }

// String is the source as the configuration writes it: by digest when
// known, else by tag.
func (r Reference) String() string {
	if r.Digest != "" {
		return Scheme + r.Repo() + "@" + r.Digest
	}
	return Scheme + r.Repo() + ":" + r.Tag
}

// ref is what the registry client resolves: the digest when known.
func (r Reference) ref() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}
