package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// Trust is a trust policy: who may sign the bytes of a plugin. Each field
// names publishers; a file signed by any of them passes. The zero Trust is
// no policy (a plugin runs unsigned, as without signatures at all); a
// policy that is set never accepts an unsigned file or one signed by a
// publisher it does not name.
type Trust struct {
	// Minisign are minisign (Ed25519) public keys, each the base64 line of
	// a minisign .pub file ("RW...").
	Minisign []string `koanf:"minisign"`
	// SigstoreKeys are PEM public key files: a Sigstore bundle signed with
	// one of their keys passes.
	SigstoreKeys []string `koanf:"sigstoreKeys"`
	// SigstoreIdentities are keyless Sigstore signers: a bundle whose
	// certificate the trusted root's CA issued to one of them passes.
	SigstoreIdentities []SigstoreIdentity `koanf:"sigstoreIdentities"`
	// TrustedRoot is the Sigstore trusted root (JSON) keyless identities
	// are checked against; required with SigstoreIdentities.
	TrustedRoot string `koanf:"trustedRoot"`
}

// SigstoreIdentity is one keyless signer: the certificate's subject
// (a SAN: an e-mail address or a workflow URI) and the OIDC issuer that
// vouched for it.
type SigstoreIdentity struct {
	// Subject is the exact SAN; SubjectRegexp a regular expression it must
	// match instead (anchor it).
	Subject       string `koanf:"subject"`
	SubjectRegexp string `koanf:"subjectRegexp"`
	// Issuer is the exact OIDC issuer URL.
	Issuer string `koanf:"issuer"`
}

// Set reports whether t is a policy (names at least one publisher).
func (t Trust) Set() bool {
	return len(t.Minisign)+len(t.SigstoreKeys)+len(t.SigstoreIdentities) > 0
}

// Equal reports whether two policies are the same.
func (t Trust) Equal(u Trust) bool { return reflect.DeepEqual(t, u) }

// TrustFor returns the trust policy of the plugin named name: its own
// (plugin.<name>.trust) when set, else the global one (plugins.trust). A
// per-plugin policy replaces the global one: it can narrow the publishers
// of one plugin as well as widen them. The zero Trust means none applies.
func (c *Config) TrustFor(name string) Trust {
	if p, ok := c.Plugin[name]; ok && p.Trust.Set() {
		return p.Trust
	}
	return c.Plugins.Trust
}

// TrustChanged reports whether a policy differs between old and new, for
// a reload that must check every plugin's signature again.
func TrustChanged(old, new *Config) bool {
	if !old.Plugins.Trust.Equal(new.Plugins.Trust) {
		return true
	}
	for name, p := range new.Plugin {
		if !p.Trust.Equal(old.Plugin[name].Trust) {
			return true
		}
	}
	for name, p := range old.Plugin {
		if _, ok := new.Plugin[name]; !ok && p.Trust.Set() {
			return true
		}
	}
	return false
}

// validateTrust checks the syntax of a policy below key; the key material
// itself is read and checked by host/trust when the policy is compiled.
func validateTrust(key string, t Trust, bad func(key, format string, args ...any)) {
	for _, k := range t.Minisign {
		if !strings.HasPrefix(k, "RW") || strings.ContainsAny(k, " \n/") {
			bad(key+".minisign", "want a minisign public key (the base64 line of a .pub file, RW...), got %q", k)
		}
	}
	for _, id := range t.SigstoreIdentities {
		if id.Issuer == "" {
			bad(key+".sigstoreIdentities", "an identity needs an issuer (the OIDC issuer URL)")
		}
		if (id.Subject == "") == (id.SubjectRegexp == "") {
			bad(key+".sigstoreIdentities", "an identity needs exactly one of subject and subjectRegexp")
		}
		if id.SubjectRegexp != "" {
			if _, err := regexp.Compile(id.SubjectRegexp); err != nil {
				bad(key+".sigstoreIdentities", "subjectRegexp: %v", err)
			}
		}
	}
	if len(t.SigstoreIdentities) > 0 && t.TrustedRoot == "" {
		bad(key+".trustedRoot", "sigstoreIdentities need a trusted root file")
	}
}

// String names the policy's publishers for people, "no policy" when
// none.
func (t Trust) String() string {
	if !t.Set() {
		return "no policy"
	}
	var parts []string
	for _, k := range t.Minisign {
		parts = append(parts, "minisign "+k)
	}
	for _, k := range t.SigstoreKeys {
		parts = append(parts, "sigstore key "+k)
	}
	for _, id := range t.SigstoreIdentities {
		parts = append(parts, fmt.Sprintf("sigstore %s%s (issuer %s)", id.Subject, id.SubjectRegexp, id.Issuer))
	}
	return strings.Join(parts, ", ")
}

// trustKeys are the keys of the trust policies.
var trustKeys = []string{
	"plugins.trust.minisign", "plugins.trust.sigstoreKeys", "plugins.trust.sigstoreIdentities", "plugins.trust.trustedRoot",
	"plugin.*.trust.minisign", "plugin.*.trust.sigstoreKeys", "plugin.*.trust.sigstoreIdentities", "plugin.*.trust.trustedRoot",
}

func init() {
	schema = append(schema, trustKeys...)
	listKeys["plugins.trust.minisign"] = true
	listKeys["plugins.trust.sigstoreKeys"] = true
}
