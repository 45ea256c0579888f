// Package trusttest makes signing keys and signatures for tests of the
// trust policy: minisign keys and keyed Sigstore bundles, as a publisher
// would make them, and the trusted root of sigstore-go's in-memory
// Sigstore for keyless ones.
package trusttest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"aead.dev/minisign"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// Minisign is a minisign key pair.
type Minisign struct {
	Public  string // the base64 line of the .pub file, as plugins.trust.minisign takes it
	Private minisign.PrivateKey
}

// NewMinisign returns a new minisign key pair.
func NewMinisign(t testing.TB) Minisign {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return Minisign{Public: pub.String(), Private: priv}
}

// Sign returns a minisign signature of data, as a .minisig file holds it:
// pre-hashed (BLAKE2b-512), as the minisign tool and corral plugin sign
// make them.
func (k Minisign) Sign(data []byte) []byte {
	r := minisign.NewReader(bytes.NewReader(data))
	if _, err := io.Copy(io.Discard, r); err != nil {
		panic(err) // a bytes.Reader does not fail
	}
	return r.Sign(k.Private)
}

// SignLegacy returns a signature of the whole message (minisign's legacy
// EdDSA mode, minisign -l), which a policy accepts too.
func (k Minisign) SignLegacy(data []byte) []byte { return minisign.Sign(k.Private, data) }

// SigstoreKey is an ECDSA P-256 key for keyed Sigstore bundles.
type SigstoreKey struct {
	Key *ecdsa.PrivateKey
	// PEMFile is the public key, written as a PEM file for
	// plugins.trust.sigstoreKeys.
	PEMFile string
}

// NewSigstoreKey returns a new key with its public half in a file under
// t's temporary directory.
func NewSigstoreKey(t testing.TB) SigstoreKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "sigstore-*.pub")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(pemBytes); err != nil {
		t.Fatal(err)
	}
	return SigstoreKey{Key: k, PEMFile: filepath.Clean(f.Name())}
}

// Bundle returns a keyed Sigstore bundle (v0.3, a message signature over
// the sha256 of data), as a .sigstore.json file holds it.
func (k SigstoreKey) Bundle(t testing.TB, data []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.Key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.NewBundle(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: "publisher"}},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TrustedRootFile writes the trusted root of sigstore-go's in-memory
// Sigstore (pkg/testing/ca) to a file, as plugins.trust.trustedRoot
// takes it.
func TrustedRootFile(t testing.TB, vs *ca.VirtualSigstore) string {
	t.Helper()
	// The test CA keeps a log's ID as the hex text of the ID; a trusted
	// root file holds the ID's bytes.
	logs := func(m map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
		out := map[string]*root.TransparencyLog{}
		for id, l := range m {
			c := *l
			var err error
			if c.ID, err = hex.DecodeString(id); err != nil {
				t.Fatal(err)
			}
			out[id] = &c
		}
		return out
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), logs(vs.CTLogs()), vs.TimestampingAuthorities(), logs(vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
