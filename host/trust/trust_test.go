package trust_test

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

func compile(t *testing.T, tr config.Trust) *trust.Policy {
	t.Helper()
	p, err := trust.Compile(tr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNoPolicyAcceptsAnything(t *testing.T) {
	p := compile(t, config.Trust{})
	if p != nil {
		t.Fatalf("Compile(zero) = %v, want nil (no policy)", p)
	}
	signer, err := p.Verify([]byte("bytes"), "", trust.Signatures{})
	if err != nil || signer != "" {
		t.Fatalf("Verify without a policy = %q, %v; want accepted", signer, err)
	}
}

// TestVerify: every outcome of a check, each refusal with its own reason.
func TestVerify(t *testing.T) {
	data := []byte("\x00asm plugin bytes")
	other := []byte("\x00asm other bytes")
	pub := trusttest.NewMinisign(t)
	stranger := trusttest.NewMinisign(t)
	key := trusttest.NewSigstoreKey(t)
	strangerKey := trusttest.NewSigstoreKey(t)
	policy := compile(t, config.Trust{Minisign: []string{pub.Public}, SigstoreKeys: []string{key.PEMFile}})
	minisignOnly := compile(t, config.Trust{Minisign: []string{pub.Public}})
	tampered := pub.Sign(data)
	tampered[len(tampered)-5] ^= 1 // inside the signature line's base64

	for _, tc := range []struct {
		name   string
		p      *trust.Policy
		sigs   trust.Signatures
		signer string // want accepted, signed by this
		reason string // want refused with this in the message
	}{
		{name: "minisign", p: policy, sigs: trust.Signatures{Minisig: pub.Sign(data)}, signer: "minisign:" + pub.Public},
		{name: "minisign legacy mode", p: policy, sigs: trust.Signatures{Minisig: pub.SignLegacy(data)}, signer: "minisign:" + pub.Public},
		{name: "keyed bundle", p: policy, sigs: trust.Signatures{Bundle: key.Bundle(t, data)}, signer: "sigstore-key:sha256:"},
		{name: "one good of two", p: policy, sigs: trust.Signatures{Minisig: stranger.Sign(data), Bundle: key.Bundle(t, data)}, signer: "sigstore-key:"},
		{name: "unsigned", p: policy, reason: "the file is unsigned"},
		{name: "untrusted minisign key", p: policy, sigs: trust.Signatures{Minisig: stranger.Sign(data)}, reason: "which the trust policy does not trust"},
		{name: "minisign over other bytes", p: policy, sigs: trust.Signatures{Minisig: pub.Sign(other)}, reason: "does not match the file's bytes"},
		{name: "not a minisig", p: policy, sigs: trust.Signatures{Minisig: []byte("hello")}, reason: "is not a minisign signature"},
		{name: "bundle by an untrusted key", p: policy, sigs: trust.Signatures{Bundle: strangerKey.Bundle(t, data)}, reason: "is not a signature of the file's bytes by a trusted key"},
		{name: "bundle over other bytes", p: policy, sigs: trust.Signatures{Bundle: key.Bundle(t, other)}, reason: "is not a signature of the file's bytes by a trusted key"},
		{name: "bundle under a minisign-only policy", p: minisignOnly, sigs: trust.Signatures{Bundle: key.Bundle(t, data)}, reason: "names no Sigstore key"},
		{name: "not a bundle", p: policy, sigs: trust.Signatures{Bundle: []byte("{}")}, reason: "the Sigstore bundle does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signer, err := tc.p.Verify(data, "", tc.sigs)
			if tc.reason == "" {
				if err != nil || !strings.HasPrefix(signer, tc.signer) {
					t.Fatalf("Verify = %q, %v; want accepted, signed by %s...", signer, err, tc.signer)
				}
				return
			}
			if !errors.Is(err, trust.ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Verify = %q, %v; want refused: %s", signer, err, tc.reason)
			}
		})
	}
}

// TestMinisignTampered: a signature altered after signing is refused.
func TestMinisignTampered(t *testing.T) {
	data := []byte("plugin")
	pub := trusttest.NewMinisign(t)
	p := compile(t, config.Trust{Minisign: []string{pub.Public}})
	sig := pub.Sign(data)
	lines := strings.Split(string(sig), "\n")
	b := []byte(lines[1])
	b[10] ^= 0x01
	lines[1] = string(b)
	if _, err := p.Verify(data, "", trust.Signatures{Minisig: []byte(strings.Join(lines, "\n"))}); !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("Verify(altered signature) = %v, want refused", err)
	}
}

// TestKeyless checks keyless bundles of sigstore-go's in-memory Sigstore
// (a Fulcio CA, a Rekor log, a TSA) against a trusted root file written
// from it and a policy of identities.
func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	rootFile := trusttest.TrustedRootFile(t, vs)
	const (
		subject = "https://github.com/acme/plugins/.github/workflows/release.yml@refs/tags/v1"
		issuer  = "https://token.actions.githubusercontent.com"
	)
	p := compile(t, config.Trust{TrustedRoot: rootFile, SigstoreIdentities: []config.SigstoreIdentity{{Subject: subject, Issuer: issuer}}})
	data := []byte("\x00asm keyless")
	sum := sha256.Sum256(data)
	for _, tc := range []struct {
		name, subject, issuer string
		data                  []byte
		ok                    bool
	}{
		{"trusted identity", subject, issuer, data, true},
		{"wrong identity", "https://github.com/mallory/plugins/.github/workflows/release.yml@refs/tags/v1", issuer, data, false},
		{"wrong issuer", subject, "https://accounts.example.com", data, false},
		{"other bytes", subject, issuer, []byte("other"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := vs.Sign(tc.subject, tc.issuer, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			signer, err := p.VerifyEntity(e, sum[:])
			if tc.ok {
				if err != nil || signer != "sigstore:"+subject+" ("+issuer+")" {
					t.Fatalf("VerifyEntity = %q, %v; want accepted", signer, err)
				}
				return
			}
			if !errors.Is(err, trust.ErrRefused) || !strings.Contains(err.Error(), "does not verify for a trusted identity") {
				t.Fatalf("VerifyEntity = %q, %v; want refused for the identity", signer, err)
			}
		})
	}
	// A keyless bundle under a policy without identities names the gap.
	keysOnly := compile(t, config.Trust{SigstoreKeys: []string{trusttest.NewSigstoreKey(t).PEMFile}})
	e, _ := vs.Sign(subject, issuer, data)
	if _, err := keysOnly.VerifyEntity(e, sum[:]); err == nil || !strings.Contains(err.Error(), "names no Sigstore identity") {
		t.Fatalf("keyless bundle under a key-only policy: %v", err)
	}
}

func TestReadSiblings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.wasm")
	s, err := trust.ReadSiblings(path)
	if err != nil || !s.Empty() {
		t.Fatalf("ReadSiblings(no files) = %+v, %v", s, err)
	}
	if err := os.WriteFile(path+trust.MinisigSuffix, []byte("sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err = trust.ReadSiblings(path); err != nil || string(s.Minisig) != "sig" || s.Bundle != nil {
		t.Fatalf("ReadSiblings = %+v, %v", s, err)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tr := range []config.Trust{
		{Minisign: []string{"RWnotakey"}},
		{SigstoreKeys: []string{"/nonexistent.pem"}},
		{TrustedRoot: "/nonexistent.json", SigstoreIdentities: []config.SigstoreIdentity{{Subject: "a", Issuer: "b"}}},
	} {
		if _, err := trust.Compile(tr); err == nil {
			t.Errorf("Compile(%+v) succeeded", tr)
		}
	}
}
