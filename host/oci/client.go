package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/corral-mcp/corral/host/trust"
)

// Media types of the CNCF Wasm OCI artifact and of the signatures
// attached to it as referrers.
const (
	ConfigMediaType = "application/vnd.wasm.config.v0+json"
	LayerMediaType  = "application/wasm"
	// MinisigArtifactType is a referrer holding a minisign signature of
	// the module (the bytes of a .minisig file).
	MinisigArtifactType = "application/vnd.corral.plugin.minisig.v1"
	// BundleArtifactType is a referrer holding a Sigstore bundle over the
	// module, as cosign attaches one.
	BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// Maximum sizes read from a registry.
const (
	maxManifestBytes  = 4 << 20
	maxModuleBytes    = 256 << 20
	maxSignatureBytes = 1 << 20
)

// Client pushes to and pulls from OCI registries.
type Client struct {
	// Username and Password, when set, are the credentials for every
	// registry; else DockerConfig (a docker config.json) supplies them by
	// host; else requests are anonymous.
	Username, Password string
	DockerConfig       string
	// PlainHTTP lists registries (host[:port]) spoken to over plain HTTP;
	// loopback registries always are.
	PlainHTTP []string
	// HTTP is the transport; nil uses a default with timeouts.
	HTTP *http.Client
}

func (c *Client) repository(ref Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref.Repo())
	if err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	repo.PlainHTTP = plainHTTP(ref.Registry, c.PlainHTTP)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	ac := &auth.Client{Client: hc, Cache: auth.NewCache()}
	switch {
	case c.Username != "" || c.Password != "":
		ac.Credential = auth.StaticCredential(ref.Registry, auth.Credential{Username: c.Username, Password: c.Password})
	case c.DockerConfig != "":
		store, err := credentials.NewFileStore(c.DockerConfig)
		if err != nil {
			return nil, fmt.Errorf("oci: docker config %s: %w", c.DockerConfig, err)
		}
		ac.Credential = credentials.Credential(store)
	}
	repo.Client = ac
	return repo, nil
}

// plainHTTP reports whether a registry is spoken to without TLS: a
// loopback one, or one the operator lists.
func plainHTTP(host string, listed []string) bool {
	if slices.Contains(listed, host) {
		return true
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Artifact is a plugin as a registry holds it.
type Artifact struct {
	// Manifest is the manifest's digest ("sha256:…").
	Manifest string
	// Module is the plugin file; ModuleDigest its sha256 ("sha256:…").
	Module       []byte
	ModuleDigest string
	// Signatures are those found as referrers of the manifest.
	Signatures trust.Signatures
}

// wasmConfig is the CNCF Wasm artifact's config.
type wasmConfig struct {
	Created      string   `json:"created"`
	Author       string   `json:"author,omitempty"`
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Push uploads module (and the signatures in sigs, each as a referrer of
// the manifest) to ref's repository and tags the manifest with ref.Tag
// when it has one. It returns the manifest's digest.
func (c *Client) Push(ctx context.Context, ref Reference, module []byte, sigs trust.Signatures) (string, error) {
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	layer := content.NewDescriptorFromBytes(LayerMediaType, module)
	cfg, _ := json.Marshal(wasmConfig{Created: time.Now().UTC().Format(time.RFC3339), Architecture: "wasm", OS: "wasip1",
		LayerDigests: []string{layer.Digest.String()}})
	cfgDesc := content.NewDescriptorFromBytes(ConfigMediaType, cfg)
	for _, b := range []struct {
		d ocispec.Descriptor
		b []byte
	}{{layer, module}, {cfgDesc, cfg}} {
		if err := pushBlob(ctx, repo, b.d, b.b); err != nil {
			return "", err
		}
	}
	man, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		ConfigDescriptor: &cfgDesc, Layers: []ocispec.Descriptor{layer},
	})
	if err != nil {
		return "", fmt.Errorf("oci: push manifest: %w", err)
	}
	if ref.Tag != "" {
		if err := repo.Tag(ctx, man, ref.Tag); err != nil {
			return "", fmt.Errorf("oci: tag %s: %w", ref.Tag, err)
		}
	}
	for _, s := range []struct {
		typ string
		b   []byte
	}{{MinisigArtifactType, sigs.Minisig}, {BundleArtifactType, sigs.Bundle}} {
		if s.b == nil {
			continue
		}
		if err := c.attach(ctx, repo, man, s.typ, s.b); err != nil {
			return "", err
		}
	}
	return man.Digest.String(), nil
}

// attach pushes sig as a referrer of subject (oras falls back to the
// referrers tag schema where the registry has no referrers API).
func (c *Client) attach(ctx context.Context, repo *remote.Repository, subject ocispec.Descriptor, typ string, sig []byte) error {
	d := content.NewDescriptorFromBytes(typ, sig)
	// The config's media type says what the referrer is too, for
	// registries that report a referrer's type from its config (the
	// OCI 1.0 convention) rather than from artifactType.
	cfg := []byte("{}")
	cfgDesc := content.NewDescriptorFromBytes(typ, cfg)
	for _, b := range []struct {
		d ocispec.Descriptor
		b []byte
	}{{d, sig}, {cfgDesc, cfg}} {
		if err := pushBlob(ctx, repo, b.d, b.b); err != nil {
			return err
		}
	}
	_, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, typ, oras.PackManifestOptions{
		Subject: &subject, Layers: []ocispec.Descriptor{d}, ConfigDescriptor: &cfgDesc,
	})
	if err != nil {
		return fmt.Errorf("oci: push signature: %w", err)
	}
	return nil
}

func pushBlob(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, b []byte) error {
	if ok, err := repo.Exists(ctx, d); err == nil && ok {
		return nil
	}
	if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil {
		return fmt.Errorf("oci: push %s: %w", d.MediaType, err)
	}
	return nil
}

// Resolve returns the manifest digest ref names now (its tag's, or its
// own digest checked to exist).
func (c *Client) Resolve(ctx context.Context, ref Reference) (string, error) {
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	d, err := repo.Resolve(ctx, ref.ref())
	if err != nil {
		return "", fmt.Errorf("oci: resolve %s: %w", ref, err)
	}
	return d.Digest.String(), nil
}

// ErrLayout is wrapped by the errors of a manifest that is not a Wasm
// plugin artifact.
var ErrLayout = errors.New("not a Wasm plugin artifact")

// Pull downloads the artifact ref names (by digest, or by tag resolved
// first) with the signatures attached to it. Every byte is checked
// against the digest that names it: a manifest, module or signature that
// does not match is an error, never a result.
func (c *Client) Pull(ctx context.Context, ref Reference) (Artifact, error) {
	repo, err := c.repository(ref)
	if err != nil {
		return Artifact{}, err
	}
	desc, err := repo.Resolve(ctx, ref.ref())
	if err != nil {
		return Artifact{}, fmt.Errorf("oci: resolve %s: %w", ref, err)
	}
	if ref.Digest != "" && desc.Digest.String() != ref.Digest {
		return Artifact{}, fmt.Errorf("oci: %s: the registry answers manifest %s", ref, desc.Digest)
	}
	if desc.Size > maxManifestBytes {
		return Artifact{}, fmt.Errorf("oci: %s: manifest of %d bytes is too large", ref, desc.Size)
	}
	raw, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return Artifact{}, fmt.Errorf("oci: fetch manifest of %s: %w", ref, err)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return Artifact{}, fmt.Errorf("oci: %s: %w: manifest: %v", ref, ErrLayout, err)
	}
	layer, err := moduleLayer(man)
	if err != nil {
		return Artifact{}, fmt.Errorf("oci: %s: %w", ref, err)
	}
	module, err := content.FetchAll(ctx, repo, layer)
	if err != nil {
		return Artifact{}, fmt.Errorf("oci: fetch module of %s: %w", ref, err)
	}
	a := Artifact{Manifest: desc.Digest.String(), Module: module, ModuleDigest: layer.Digest.String()}
	if a.Signatures, err = c.signatures(ctx, repo, desc); err != nil {
		return Artifact{}, fmt.Errorf("oci: signatures of %s: %w", ref, err)
	}
	return a, nil
}

// moduleLayer checks the Wasm artifact layout (an image manifest, the Wasm
// config, one application/wasm layer) and returns the module's layer.
func moduleLayer(m ocispec.Manifest) (ocispec.Descriptor, error) {
	if m.MediaType != ocispec.MediaTypeImageManifest || m.SchemaVersion != 2 {
		return ocispec.Descriptor{}, fmt.Errorf("%w: manifest media type %q", ErrLayout, m.MediaType)
	}
	if m.Config.MediaType != ConfigMediaType {
		return ocispec.Descriptor{}, fmt.Errorf("%w: config media type %q, want %s", ErrLayout, m.Config.MediaType, ConfigMediaType)
	}
	var wasm []ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == LayerMediaType {
			wasm = append(wasm, l)
		}
	}
	if len(wasm) != 1 || len(m.Layers) != 1 {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %d layers, %d of them %s; want exactly one", ErrLayout, len(m.Layers), len(wasm), LayerMediaType)
	}
	l := wasm[0]
	if l.Digest.Algorithm() != digest.SHA256 || l.Size > maxModuleBytes {
		return ocispec.Descriptor{}, fmt.Errorf("%w: module layer %s of %d bytes", ErrLayout, l.Digest, l.Size)
	}
	return l, nil
}

// signatures fetches the referrers of each signature type (of several of
// one type, the last listed).
func (c *Client) signatures(ctx context.Context, repo *remote.Repository, subject ocispec.Descriptor) (trust.Signatures, error) {
	var s trust.Signatures
	for _, typ := range []string{MinisigArtifactType, BundleArtifactType} {
		var found []ocispec.Descriptor
		err := repo.Referrers(ctx, subject, typ, func(rs []ocispec.Descriptor) error {
			found = append(found, rs...)
			return nil
		})
		if err != nil {
			return s, err
		}
		for _, r := range found {
			if r.Size > maxManifestBytes {
				continue
			}
			raw, err := content.FetchAll(ctx, repo, r)
			if err != nil {
				return s, err
			}
			var m ocispec.Manifest
			if json.Unmarshal(raw, &m) != nil || len(m.Layers) != 1 || m.Layers[0].Size > maxSignatureBytes {
				continue
			}
			sig, err := content.FetchAll(ctx, repo, m.Layers[0])
			if err != nil {
				return s, err
			}
			if typ == MinisigArtifactType {
				s.Minisig = sig
			} else {
				s.Bundle = sig
			}
		}
	}
	return s, nil
}
