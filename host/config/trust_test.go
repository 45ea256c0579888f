package config

import (
	"path/filepath"
	"strings"
	"testing"
)

const testMinisignKey = "RWTjrqwaaoxTnYGAAlgbwsFqkZ4nulEjFqb+CRMo8mrNVamAsCvawQ57"

func TestTrustKeys(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "corral.yaml", `
plugins:
  trust:
    minisign: [`+testMinisignKey+`]
    sigstoreKeys: [keys/release.pem]
plugin:
  own:
    trust:
      sigstoreIdentities:
        - subject: dev@example.com
          issuer: https://accounts.example.com
      trustedRoot: root.json
  other:
    enabled: true
`)
	cfg, err := Load(Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Plugins.Trust.SigstoreKeys; len(got) != 1 || got[0] != filepath.Join(dir, "keys", "release.pem") {
		t.Errorf("sigstoreKeys = %v, want resolved against the file", got)
	}
	if got := cfg.TrustFor("own"); got.TrustedRoot != filepath.Join(dir, "root.json") || len(got.Minisign) != 0 ||
		got.SigstoreIdentities[0].Subject != "dev@example.com" {
		t.Errorf("TrustFor(own) = %+v, want its own policy in place of the global one", got)
	}
	for _, name := range []string{"other", "absent"} {
		if got := cfg.TrustFor(name); len(got.Minisign) != 1 {
			t.Errorf("TrustFor(%s) = %+v, want the global policy", name, got)
		}
	}
	if TrustChanged(cfg, cfg) {
		t.Error("TrustChanged(cfg, cfg)")
	}
	c := *cfg
	c.Plugins.Trust = Trust{}
	if !TrustChanged(cfg, &c) || ReloadKeys(cfg, &c)[0] != "plugins.trust" {
		t.Error("a global policy removed is a change to reload")
	}
}

func TestTrustValidation(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"plugins:\n  trust:\n    minisign: [nokey]\n", "plugins.trust.minisign: want a minisign public key"},
		{"plugins:\n  trust:\n    sigstoreIdentities: [{subject: a}]\n    trustedRoot: r.json\n", "an identity needs an issuer"},
		{"plugins:\n  trust:\n    sigstoreIdentities: [{issuer: i}]\n    trustedRoot: r.json\n", "exactly one of subject and subjectRegexp"},
		{"plugins:\n  trust:\n    sigstoreIdentities: [{subjectRegexp: '(', issuer: i}]\n    trustedRoot: r.json\n", "subjectRegexp:"},
		{"plugin:\n  p:\n    trust:\n      sigstoreIdentities: [{subject: a, issuer: i}]\n", "plugin.p.trust.trustedRoot: sigstoreIdentities need a trusted root file"},
	} {
		dir := t.TempDir()
		_, err := Load(Source{File: writeFile(t, dir, "c.yaml", tc.yaml)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
