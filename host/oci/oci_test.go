package oci_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/oci"
	"github.com/corral-mcp/corral/host/oci/ocitest"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

var ctx = context.Background()

// module returns distinct bytes standing for a plugin module.
func module(tag string) []byte { return []byte("\x00asm\x01\x00\x00\x00 " + tag) }

func ref(t *testing.T, r *ocitest.Registry, rest string) oci.Reference {
	t.Helper()
	ref, err := oci.ParseSource("oci://" + r.Host + "/" + rest)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// resolver returns a resolver over a new store.
func resolver(t *testing.T, c *oci.Client) *oci.Resolver {
	t.Helper()
	st, err := oci.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &oci.Resolver{Client: c, Store: st}
}

// bind resolves one plugin with the given source.
func bind(t *testing.T, r *oci.Resolver, p config.Plugin) (config.Plugin, error) {
	t.Helper()
	cfg, err := r.Bind(ctx, &config.Config{Plugin: map[string]config.Plugin{"p": p}})
	if cfg == nil {
		t.Fatalf("Bind: %v", err)
	}
	return cfg.Plugin["p"], err
}

func source(s string) config.Plugin {
	p := config.DefaultPlugin()
	p.Source = s
	return p
}

// TestPushPull: the Wasm artifact layout, pull by tag and by digest, a
// minisign signature and a Sigstore bundle as referrers, through the
// referrers API and through oras's tag-schema fallback.
func TestPushPull(t *testing.T) {
	key := trusttest.NewMinisign(t)
	for _, referrers := range []bool{true, false} {
		reg := ocitest.New(t, ocitest.Options{NoReferrers: !referrers})
		c := &oci.Client{}
		data := module("v1")
		sig := key.Sign(data)
		bundle := trusttest.NewSigstoreKey(t).Bundle(t, data)
		d, err := c.Push(ctx, ref(t, reg, "corral/p:v1"), data, trust.Signatures{Minisig: sig, Bundle: bundle})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []oci.Reference{ref(t, reg, "corral/p:v1"), ref(t, reg, "corral/p@"+d)} {
			a, err := c.Pull(ctx, r)
			if err != nil {
				t.Fatalf("referrers %v: pull %s: %v", referrers, r, err)
			}
			if a.Manifest != d || !bytes.Equal(a.Module, data) || !bytes.Equal(a.Signatures.Minisig, sig) || !bytes.Equal(a.Signatures.Bundle, bundle) {
				t.Errorf("referrers %v: pull %s = %s, %q, sig %q; want the pushed artifact and signature", referrers, r, a.Manifest, a.Module, a.Signatures.Minisig)
			}
		}
	}
}

// TestStoreServesWhenRegistryDown: what was pulled once binds again with
// the registry down, by digest and by tag.
func TestStoreServesWhenRegistryDown(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{})
	c := &oci.Client{}
	d, err := c.Push(ctx, ref(t, reg, "corral/p:v1"), module("v1"), trust.Signatures{})
	if err != nil {
		t.Fatal(err)
	}
	r := resolver(t, c)
	for _, src := range []string{"oci://" + reg.Host + "/corral/p:v1", "oci://" + reg.Host + "/corral/p@" + d} {
		first, err := bind(t, r, source(src))
		if err != nil {
			t.Fatal(err)
		}
		reg.Down(true)
		again, err := bind(t, r, source(src))
		reg.Down(false)
		if err != nil || again.File != first.File || again.SHA256 != first.SHA256 {
			t.Fatalf("%s with the registry down: %+v, %v; want the stored copy %s", src, again.Binding, err, first.File)
		}
		if b, _ := os.ReadFile(again.File); !bytes.Equal(b, module("v1")) {
			t.Errorf("stored module = %q", b)
		}
	}
	// Never pulled: the outage is an error, and the name binds nothing
	// that exists.
	reg.Down(true)
	p, err := bind(t, resolver(t, c), source("oci://"+reg.Host+"/corral/p:v1"))
	if err == nil || !strings.Contains(err.Error(), "plugin p") {
		t.Errorf("first pull with the registry down: %v, want an error", err)
	}
	if _, serr := os.Stat(p.File); p.File == "" || serr == nil {
		t.Errorf("unresolved plugin bound to %q, want a file that does not exist", p.File)
	}
}

// TestTamperedLayer: bytes that do not match the layer's digest are
// refused and never stored; a stored copy of the recorded digest keeps
// serving when a followed tag's new bytes are tampered.
func TestTamperedLayer(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{})
	c := &oci.Client{}
	if _, err := c.Push(ctx, ref(t, reg, "corral/p:v1"), module("v1"), trust.Signatures{}); err != nil {
		t.Fatal(err)
	}
	r := resolver(t, c)
	follow := source("oci://" + reg.Host + "/corral/p:v1")
	follow.FollowTag = true
	first, err := bind(t, r, follow)
	if err != nil {
		t.Fatal(err)
	}
	// The tag moves to v2, whose layer the registry serves tampered.
	if _, err := c.Push(ctx, ref(t, reg, "corral/p:v1"), module("v2"), trust.Signatures{}); err != nil {
		t.Fatal(err)
	}
	reg.Tamper(sha256Of(module("v2")))
	again, err := bind(t, r, follow)
	if err != nil || again.File != first.File {
		t.Fatalf("tampered new version: %+v, %v; want the stored v1 kept", again.Binding, err)
	}
	// Pulled fresh, the tampered layer is an error naming the digest.
	_, err = c.Pull(ctx, ref(t, reg, "corral/p:v1"))
	if err == nil || !strings.Contains(err.Error(), "fetch module") {
		t.Fatalf("pull of a tampered layer: %v, want refused", err)
	}
	if _, err := bind(t, resolver(t, c), follow); err == nil {
		t.Error("a tampered layer bound with no stored copy")
	}
}

// TestMovedTag: a tag that moves to other bytes is not followed unless
// the plugin says so, and never under a lock.
func TestMovedTag(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{})
	c := &oci.Client{}
	src := "oci://" + reg.Host + "/corral/p:stable"
	d1, err := c.Push(ctx, ref(t, reg, "corral/p:stable"), module("v1"), trust.Signatures{})
	if err != nil {
		t.Fatal(err)
	}
	r := resolver(t, c)
	v1, err := bind(t, r, source(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, ref(t, reg, "corral/p:stable"), module("v2"), trust.Signatures{}); err != nil {
		t.Fatal(err)
	}
	kept, err := bind(t, r, source(src))
	if err != nil || kept.SHA256 != v1.SHA256 {
		t.Errorf("moved tag, not followed: %s, %v; want v1 (%s)", kept.SHA256, err, v1.SHA256)
	}
	follow := source(src)
	follow.FollowTag = true
	moved, err := bind(t, r, follow)
	if err != nil || moved.SHA256 != strings.TrimPrefix(sha256Of(module("v2")), "sha256:") {
		t.Errorf("moved tag, followed: %s, %v; want v2", moved.SHA256, err)
	}
	// A lock pins v1 whatever the configuration asks.
	lockFile := filepath.Join(t.TempDir(), "corral.lock")
	l := &oci.Lock{Plugins: map[string]oci.LockEntry{"p": {Source: "oci://" + reg.Host + "/corral/p@" + d1, Tag: "stable", Module: "sha256:" + v1.SHA256}}}
	if err := l.Write(lockFile); err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Bind(ctx, &config.Config{Plugins: config.Plugins{Lock: lockFile}, Plugin: map[string]config.Plugin{"p": follow}})
	if err != nil || cfg.Plugin["p"].SHA256 != v1.SHA256 {
		t.Errorf("under a lock: %+v, %v; want v1", cfg.Plugin["p"].Binding, err)
	}
}

// TestLock: a lock serves exactly its plugins; a module that does not
// match the lock is refused.
func TestLock(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{})
	c := &oci.Client{}
	d, err := c.Push(ctx, ref(t, reg, "corral/p:v1"), module("v1"), trust.Signatures{})
	if err != nil {
		t.Fatal(err)
	}
	r := resolver(t, c)
	dir := t.TempDir()
	write := func(module string) string {
		f := filepath.Join(dir, "corral.lock")
		l := &oci.Lock{Plugins: map[string]oci.LockEntry{"p": {Source: "oci://" + reg.Host + "/corral/p@" + d, Module: module, Signer: "minisign:RWX"}}}
		if err := l.Write(f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	other := source("oci://" + reg.Host + "/corral/other:v1")
	cfg, err := r.Bind(ctx, &config.Config{Plugins: config.Plugins{Lock: write(sha256Of(module("v1")))}, Plugin: map[string]config.Plugin{"other": other}})
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Plugin["p"]; p.File == "" || p.Signer != "minisign:RWX" || p.Source == "" {
		t.Errorf("locked p: %+v, want bound with the lock's signer", p.Binding)
	}
	if o := cfg.Plugin["other"]; o.Source != "" || o.File != "" {
		t.Errorf("unlocked other: %+v, want no source under a lock", o.Binding)
	}
	_, err = r.Bind(ctx, &config.Config{Plugins: config.Plugins{Lock: write(sha256Of(module("v2")))}})
	if err == nil || !strings.Contains(err.Error(), "the lock pins") {
		t.Errorf("module not matching the lock: %v, want refused", err)
	}
}

// TestCredentials: a registry that requires them refuses an anonymous
// pull and accepts credentials from the configuration or a docker
// config.json.
func TestCredentials(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{Username: "ci", Password: "s3cret"})
	auth := &oci.Client{Username: "ci", Password: "s3cret"}
	if _, err := auth.Push(ctx, ref(t, reg, "corral/p:v1"), module("v1"), trust.Signatures{}); err != nil {
		t.Fatal(err)
	}
	if _, err := (&oci.Client{}).Pull(ctx, ref(t, reg, "corral/p:v1")); err == nil || !strings.Contains(err.Error(), "credential not found") {
		t.Errorf("anonymous pull: %v, want refused for want of credentials", err)
	}
	if _, err := (&oci.Client{Username: "ci", Password: "wrong"}).Pull(ctx, ref(t, reg, "corral/p:v1")); err == nil {
		t.Error("pull with a wrong password succeeded")
	}
	dc := filepath.Join(t.TempDir(), "config.json")
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{reg.Host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))}}})
	os.WriteFile(dc, b, 0o600)
	for name, c := range map[string]*oci.Client{"configured": auth, "docker config.json": {DockerConfig: dc}} {
		if a, err := c.Pull(ctx, ref(t, reg, "corral/p:v1")); err != nil || !bytes.Equal(a.Module, module("v1")) {
			t.Errorf("%s credentials: %v", name, err)
		}
	}
}

// TestNotAWasmArtifact: an image that is not the Wasm artifact layout (a
// container image's config) is refused.
func TestNotAWasmArtifact(t *testing.T) {
	reg := ocitest.New(t, ocitest.Options{})
	repo, err := remote.NewRepository(reg.Host + "/corral/image")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	layer := module("v1")
	ld := content.NewDescriptorFromBytes(oci.LayerMediaType, layer)
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	cd := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, cfg)
	for d, b := range map[*ocispec.Descriptor][]byte{&ld: layer, &cd: cfg} {
		if err := repo.Push(ctx, *d, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	man, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cd, Layers: []ocispec.Descriptor{ld}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&oci.Client{}).Pull(ctx, ref(t, reg, "corral/image@"+man.Digest.String()))
	if !errors.Is(err, oci.ErrLayout) || !strings.Contains(err.Error(), "config media type") {
		t.Errorf("pull of a container image: %v, want refused for its layout", err)
	}
}

// TestParseSource: sources that name no tag or digest, or another digest
// than sha256, are refused.
func TestParseSource(t *testing.T) {
	for _, src := range []string{"oci://r/x", "oci://r", "oci://r/x@sha512:" + strings.Repeat("0", 128)} {
		if _, err := oci.ParseSource(src); err == nil {
			t.Errorf("ParseSource(%q) accepted", src)
		}
	}
}

func sha256Of(b []byte) string {
	return trustDigest(b)
}
