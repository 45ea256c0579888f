package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"aead.dev/minisign"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/corral-mcp/corral/host/config"
)

// Suffixes of the signature files beside a plugin file.
const (
	MinisigSuffix = ".minisig"
	BundleSuffix  = ".sigstore.json"
)

// ErrRefused is wrapped by every refusal of Verify.
var ErrRefused = errors.New("signature check failed")

// Signatures are the signatures that travel with one plugin file.
type Signatures struct {
	Minisig []byte // a minisign signature; nil when there is none
	Bundle  []byte // a Sigstore bundle (JSON); nil when there is none
}

// Empty reports whether there is no signature at all.
func (s Signatures) Empty() bool { return s.Minisig == nil && s.Bundle == nil }

// ReadSiblings reads the signatures beside the plugin file at path
// (path+MinisigSuffix, path+BundleSuffix). A missing file is no signature;
// any other read failure is an error.
func ReadSiblings(path string) (Signatures, error) {
	var s Signatures
	var err error
	if s.Minisig, err = readOptional(path + MinisigSuffix); err != nil {
		return s, err
	}
	s.Bundle, err = readOptional(path + BundleSuffix)
	return s, err
}

func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return b, nil
}

// Policy is a compiled trust policy. A nil *Policy is no policy: Verify
// accepts everything, signed or not.
type Policy struct {
	desc     string
	minisign []minisign.PublicKey
	keys     []sigstoreKey
	keyless  []keyless
}

// keyless is a trusted root and the identities it may vouch for.
type keyless struct {
	verifier *verify.Verifier
	ids      []verify.PolicyOption
}

// sigstoreKey is one trusted key for keyed Sigstore bundles.
type sigstoreKey struct {
	name     string // "sigstore-key:sha256:<hex of the DER key>"
	verifier *verify.Verifier
}

// Compile reads the key material of t. It returns nil for the zero Trust
// (no policy).
func Compile(t config.Trust) (*Policy, error) {
	if !t.Set() {
		return nil, nil
	}
	p := &Policy{desc: t.String()}
	for _, k := range t.Minisign {
		var pk minisign.PublicKey
		if err := pk.UnmarshalText([]byte(k)); err != nil {
			return nil, fmt.Errorf("trust: minisign key %q: %w", k, err)
		}
		p.minisign = append(p.minisign, pk)
	}
	for _, file := range t.SigstoreKeys {
		k, err := loadKey(file)
		if err != nil {
			return nil, err
		}
		p.keys = append(p.keys, k)
	}
	if len(t.SigstoreIdentities) > 0 {
		tr, err := root.NewTrustedRootFromPath(t.TrustedRoot)
		if err != nil {
			return nil, fmt.Errorf("trust: trusted root %s: %w", t.TrustedRoot, err)
		}
		var k keyless
		if k.verifier, err = KeylessVerifier(tr); err != nil {
			return nil, err
		}
		for _, id := range t.SigstoreIdentities {
			ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, id.SubjectRegexp)
			if err != nil {
				return nil, fmt.Errorf("trust: identity %s%s: %w", id.Subject, id.SubjectRegexp, err)
			}
			k.ids = append(k.ids, verify.WithCertificateIdentity(ci))
		}
		p.keyless = []keyless{k}
	}
	return p, nil
}

// KeylessVerifier returns the verifier of keyless bundles against
// material: a certificate its CA issued, logged in its transparency log,
// at a time one of its observers (the log or a timestamp authority)
// vouches for.
func KeylessVerifier(material root.TrustedMaterial) (*verify.Verifier, error) {
	v, err := verify.NewVerifier(material, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return v, nil
}

// loadKey reads a PEM public key file as a trusted key for keyed bundles.
func loadKey(file string) (sigstoreKey, error) {
	pemBytes, err := os.ReadFile(file)
	if err != nil {
		return sigstoreKey{}, fmt.Errorf("trust: sigstore key: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return sigstoreKey{}, fmt.Errorf("trust: sigstore key %s: %w", file, err)
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return sigstoreKey{}, fmt.Errorf("trust: sigstore key %s: %w", file, err)
	}
	sv, err := signature.LoadDefaultVerifier(pub)
	if err != nil {
		return sigstoreKey{}, fmt.Errorf("trust: sigstore key %s: %w", file, err)
	}
	key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
	v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return sigstoreKey{}, fmt.Errorf("trust: sigstore key %s: %w", file, err)
	}
	sum := sha256.Sum256(der)
	return sigstoreKey{name: "sigstore-key:sha256:" + hex.EncodeToString(sum[:]), verifier: v}, nil
}

// union returns a policy trusting every publisher of ps.
func union(ps []*Policy) *Policy {
	u := &Policy{}
	var descs []string
	for _, p := range ps {
		u.minisign = append(u.minisign, p.minisign...)
		u.keys = append(u.keys, p.keys...)
		u.keyless = append(u.keyless, p.keyless...)
		descs = append(descs, p.desc)
	}
	u.desc = strings.Join(descs, "; or ")
	return u
}

// String names the policy's publishers.
func (p *Policy) String() string {
	if p == nil {
		return "no policy"
	}
	return p.desc
}

// Verify checks that sigs hold a signature of data (whose sha256, lowercase
// hex, is digest; "" computes it) by a publisher p trusts and returns that
// publisher: "minisign:<public key>",
// "sigstore-key:sha256:<key digest>" or "sigstore:<subject> (<issuer>)".
// With no policy (p nil) it returns "" and nil. A refusal wraps
// ErrRefused and says why; when both signatures are present, one
// acceptable signature is enough.
func (p *Policy) Verify(data []byte, digest string, sigs Signatures) (string, error) {
	if p == nil {
		return "", nil
	}
	if sigs.Empty() {
		return "", fmt.Errorf("%w: the file is unsigned (no %s or %s beside it) and its trust policy requires a signature by %s",
			ErrRefused, MinisigSuffix, BundleSuffix, p.desc)
	}
	var errs []error
	if sigs.Minisig != nil {
		signer, err := p.verifyMinisign(data, sigs.Minisig)
		if err == nil {
			return signer, nil
		}
		errs = append(errs, err)
	}
	if sigs.Bundle != nil {
		var b bundle.Bundle
		if err := b.UnmarshalJSON(sigs.Bundle); err != nil {
			errs = append(errs, fmt.Errorf("%w: the Sigstore bundle does not parse: %v", ErrRefused, err))
		} else {
			sum, err := hex.DecodeString(digest)
			if len(sum) != sha256.Size || err != nil {
				s := sha256.Sum256(data)
				sum = s[:]
			}
			signer, err := p.VerifyEntity(&b, sum)
			if err == nil {
				return signer, nil
			}
			errs = append(errs, err)
		}
	}
	return "", errors.Join(errs...)
}

func (p *Policy) verifyMinisign(data, sig []byte) (string, error) {
	var s minisign.Signature
	if err := s.UnmarshalText(sig); err != nil {
		return "", fmt.Errorf("%w: the %s file is not a minisign signature: %v", ErrRefused, MinisigSuffix, err)
	}
	if len(p.minisign) == 0 {
		return "", fmt.Errorf("%w: signed with minisign key %016X, but the trust policy names no minisign key (it trusts %s)", ErrRefused, s.KeyID, p.desc)
	}
	for _, k := range p.minisign {
		if k.ID() != s.KeyID {
			continue
		}
		if !minisign.Verify(k, data, sig) {
			return "", fmt.Errorf("%w: the minisign signature by trusted key %016X does not match the file's bytes (it signs other bytes, or was altered)", ErrRefused, s.KeyID)
		}
		return "minisign:" + k.String(), nil
	}
	return "", fmt.Errorf("%w: signed by minisign key %016X, which the trust policy does not trust (it trusts %s)", ErrRefused, s.KeyID, p.desc)
}

// VerifyEntity checks a Sigstore signed entity (a bundle) over the
// artifact whose sha256 is digest: keyed against the trusted keys,
// keyless against the trusted root and identities.
func (p *Policy) VerifyEntity(e verify.SignedEntity, digest []byte) (string, error) {
	vc, err := e.VerificationContent()
	if err != nil {
		return "", fmt.Errorf("%w: the Sigstore bundle has no verification material: %v", ErrRefused, err)
	}
	artifact := verify.WithArtifactDigest("sha256", digest)
	if vc.Certificate() == nil {
		if len(p.keys) == 0 {
			return "", fmt.Errorf("%w: the Sigstore bundle is signed with a key, but the trust policy names no Sigstore key (it trusts %s)", ErrRefused, p.desc)
		}
		var last error
		for _, k := range p.keys {
			_, err := k.verifier.Verify(e, verify.NewPolicy(artifact, verify.WithKey()))
			if err == nil {
				return k.name, nil
			}
			last = err
		}
		return "", fmt.Errorf("%w: the Sigstore bundle is not a signature of the file's bytes by a trusted key (%s): %v", ErrRefused, p.desc, last)
	}
	if len(p.keyless) == 0 {
		return "", fmt.Errorf("%w: the Sigstore bundle is signed keyless (a certificate), but the trust policy names no Sigstore identity (it trusts %s)", ErrRefused, p.desc)
	}
	var res *verify.VerificationResult
	for _, k := range p.keyless {
		if res, err = k.verifier.Verify(e, verify.NewPolicy(artifact, k.ids...)); err == nil {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("%w: the Sigstore bundle does not verify for a trusted identity (%s): %v", ErrRefused, p.desc, err)
	}
	cert := res.Signature.Certificate
	return fmt.Sprintf("sigstore:%s (%s)", cert.SubjectAlternativeName, cert.Issuer), nil
}
