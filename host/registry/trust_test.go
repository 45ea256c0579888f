package registry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

// signedSpec writes a spec plugin file and, unless sig is nil, sig(data)
// beside it as its .minisig.
func signedSpec(t *testing.T, dir, file string, s spec, sig func([]byte) []byte) []byte {
	t.Helper()
	data := specBytes(s)
	if sig != nil {
		writeRaw(t, dir, file+trust.MinisigSuffix, sig(data))
	}
	writeRaw(t, dir, file, data)
	return data
}

func trusting(keys ...string) *config.Config {
	return &config.Config{Plugins: config.Plugins{Trust: config.Trust{Minisign: keys}}}
}

// TestTrustBeforeCompile: under a global policy a directory drop runs
// only with a signature by a trusted key, and a refused file is never
// compiled; each refusal says why.
func TestTrustBeforeCompile(t *testing.T) {
	pub, stranger := trusttest.NewMinisign(t), trusttest.NewMinisign(t)
	dir := t.TempDir()
	signedSpec(t, dir, "good.wasm", spec{Name: "good", Scheme: "g", Text: "g"}, pub.Sign)
	signedSpec(t, dir, "unsigned.wasm", spec{Name: "unsigned", Scheme: "u"}, nil)
	signedSpec(t, dir, "stranger.wasm", spec{Name: "stranger", Scheme: "s"}, stranger.Sign)
	signedSpec(t, dir, "mismatch.wasm", spec{Name: "mismatch", Scheme: "m"}, func([]byte) []byte {
		return pub.Sign(specBytes(spec{Name: "mismatch", Scheme: "m", Text: "other bytes"}))
	})
	loader := &nativeLoader{}
	r := start(t, dir, loader, trusting(pub.Public), nil)
	if s, err := read(r.Catalog(), "g://doc"); err != nil || s != "g" {
		t.Fatalf("g://doc = %q, %v; want the signed plugin serving", s, err)
	}
	if n := loader.compiles.Load(); n != 1 {
		t.Errorf("%d compiles, want 1: refused files never reach the compiler", n)
	}
	if f := fileState(r, "good.wasm"); f.Signer != "minisign:"+pub.Public {
		t.Errorf("good: signer %q, want the trusted key", f.Signer)
	}
	for file, reason := range map[string]string{
		"unsigned.wasm": "the file is unsigned",
		"stranger.wasm": "which the trust policy does not trust",
		"mismatch.wasm": "does not match the file's bytes",
	} {
		if f := fileState(r, file); f.State != StateRefused || !strings.Contains(f.Error, reason) {
			t.Errorf("%s: %+v, want refused: %s", file, f, reason)
		}
	}
}

// TestTrustOnEveryLoad: a signature stripped, or a policy tightened by a
// reload, takes a serving plugin out at once (no version of it serves);
// a signature added puts it back.
func TestTrustOnEveryLoad(t *testing.T) {
	pub := trusttest.NewMinisign(t)
	dir := t.TempDir()
	data := signedSpec(t, dir, "p.wasm", spec{Name: "p", Scheme: "p", Text: "v1"}, pub.Sign)
	loader := &nativeLoader{}
	r := start(t, dir, loader, trusting(pub.Public), nil)
	if s, err := read(r.Catalog(), "p://doc"); err != nil || s != "v1" {
		t.Fatalf("p://doc = %q, %v", s, err)
	}
	// Stripped: the signature file goes, the plugin stops serving.
	if err := os.Remove(filepath.Join(dir, "p.wasm"+trust.MinisigSuffix)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "stripped plugin refused", func() bool { return fileState(r, "p.wasm").State == StateRefused })
	if _, err := read(r.Catalog(), "p://doc"); err == nil {
		t.Error("p://doc still served after its signature was stripped")
	}
	// Signed again: it serves again.
	writeRaw(t, dir, "p.wasm"+trust.MinisigSuffix, pub.Sign(data))
	eventually(t, "re-signed plugin serving", func() bool { return fileState(r, "p.wasm").State == StateServing })
	// A reload to a policy trusting another key refuses it without a
	// change to the file.
	other := trusttest.NewMinisign(t)
	r.UpdateConfig(trusting(other.Public))
	eventually(t, "plugin refused under the new policy", func() bool { return fileState(r, "p.wasm").State == StateRefused })
	if _, err := read(r.Catalog(), "p://doc"); err == nil {
		t.Error("p://doc still served under a policy that does not trust its signer")
	}
	// No policy: today's behaviour, it serves unsigned.
	r.UpdateConfig(&config.Config{})
	eventually(t, "plugin serving without a policy", func() bool { return fileState(r, "p.wasm").State == StateServing })
}

// TestTrustPerPlugin: a plugin's own policy replaces the global one; for
// a file the configuration does not bind it applies once the manifest
// names the plugin, for a bound one before compiling.
func TestTrustPerPlugin(t *testing.T) {
	global, own := trusttest.NewMinisign(t), trusttest.NewMinisign(t)
	dir := t.TempDir()
	signedSpec(t, dir, "a.wasm", spec{Name: "a", Scheme: "a", Text: "a"}, own.Sign)    // a trusts own only
	signedSpec(t, dir, "b.wasm", spec{Name: "b", Scheme: "b", Text: "b"}, global.Sign) // b: global
	signedSpec(t, dir, "c.wasm", spec{Name: "c", Scheme: "c", Text: "c"}, global.Sign) // c trusts own only
	signedSpec(t, dir, "d.wasm", spec{Name: "d", Scheme: "d", Text: "d"}, global.Sign) // d bound, trusts own only
	ownPolicy := config.DefaultPlugin()
	ownPolicy.Trust = config.Trust{Minisign: []string{own.Public}}
	bound := ownPolicy
	bound.File = filepath.Join(dir, "d.wasm")
	cfg := &config.Config{
		Plugins: config.Plugins{Trust: config.Trust{Minisign: []string{global.Public}}},
		Plugin:  map[string]config.Plugin{"a": ownPolicy, "c": ownPolicy, "d": bound},
	}
	loader := &nativeLoader{}
	r := start(t, dir, loader, cfg, nil)
	for file, want := range map[string]string{"a.wasm": StateServing, "b.wasm": StateServing, "c.wasm": StateRefused, "d.wasm": StateRefused} {
		if f := settledState(t, r, file, 2*time.Second); f.State != want {
			t.Errorf("%s: %+v, want %s", file, f, want)
		}
	}
	if f := fileState(r, "c.wasm"); !strings.Contains(f.Error, "plugin c: refused by its trust policy") {
		t.Errorf("c: %q, want its own policy named", f.Error)
	}
	if f := fileState(r, "d.wasm"); !strings.Contains(f.Error, "plugin d: refused by its trust policy") {
		t.Errorf("d: %q, want its own policy named", f.Error)
	}
	// c reached the compiler (signed by a trusted publisher, its plugin
	// unknown until then); d, bound, did not.
	if n := loader.compiles.Load(); n != 3 {
		t.Errorf("%d compiles, want 3 (a, b, c)", n)
	}
}

// TestTrustOnCacheHit: a module the compilation cache holds is checked
// like any other: the cache never answers for bytes the policy refuses.
func TestTrustOnCacheHit(t *testing.T) {
	good := watFixture(t, "good")
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	pub := trusttest.NewMinisign(t)
	dir := t.TempDir()
	writeRaw(t, dir, "good.wasm", good)
	first := start(t, dir, WasmLoader(rt), &config.Config{}, nil) // compiles into the cache
	if f := fileState(first, "good.wasm"); f.State != StateServing {
		t.Fatalf("good without a policy: %+v", f)
	}
	r := start(t, dir, WasmLoader(rt), trusting(pub.Public), nil)
	if f := fileState(r, "good.wasm"); f.State != StateRefused || !strings.Contains(f.Error, "unsigned") {
		t.Fatalf("cached good under a policy, unsigned: %+v, want refused", f)
	}
	writeRaw(t, dir, "good.wasm"+trust.MinisigSuffix, pub.Sign(good))
	eventually(t, "signed good serving", func() bool { return fileState(r, "good.wasm").State == StateServing })
}
