package trust_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

// benchModule is a bundled plugin (build/plugins/issues.wasm) when built,
// else as many random bytes: what one check reads.
func benchModule(b *testing.B) []byte {
	_, file, _, _ := runtime.Caller(0)
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "build", "plugins", "issues.wasm")); err == nil {
		return data
	}
	data := make([]byte, 4<<20)
	rand.Read(data)
	return data
}

// BenchmarkCheck is the per-plugin cost of a signature check beside the
// sha256 of the module the load computes anyway (for the binding): a
// minisign signature (pre-hashed: one BLAKE2b pass over the module, then
// Ed25519), a keyed Sigstore bundle and a keyless one (certificate, log
// entry, timestamp; sigstore-go's in-memory Sigstore), both over the
// sha256 already computed.
func BenchmarkCheck(b *testing.B) {
	data := benchModule(b)
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sha256.Sum256(data)
		}
	})
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	key := trusttest.NewMinisign(b)
	p, _ := trust.Compile(config.Trust{Minisign: []string{key.Public}})
	sigs := trust.Signatures{Minisig: key.Sign(data)}
	b.Run("minisign", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := p.Verify(data, "", sigs); err != nil {
				b.Fatal(err)
			}
		}
	})
	small := data[:1024]
	smallSigs := trust.Signatures{Minisig: key.Sign(small)}
	b.Run("minisign-1KiB", func(b *testing.B) { // the fixed cost, hashing aside
		for b.Loop() {
			if _, err := p.Verify(small, "", smallSigs); err != nil {
				b.Fatal(err)
			}
		}
	})
	sk := trusttest.NewSigstoreKey(b)
	kp, _ := trust.Compile(config.Trust{SigstoreKeys: []string{sk.PEMFile}})
	bundle := trust.Signatures{Bundle: sk.Bundle(b, data)}
	b.Run("sigstore-keyed", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := kp.Verify(data, digest, bundle); err != nil {
				b.Fatal(err)
			}
		}
	})
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		b.Fatal(err)
	}
	e, err := vs.Sign("dev@example.com", "https://accounts.example.com", data)
	if err != nil {
		b.Fatal(err)
	}
	kl, err := trust.Compile(config.Trust{TrustedRoot: trusttest.TrustedRootFile(b, vs),
		SigstoreIdentities: []config.SigstoreIdentity{{Subject: "dev@example.com", Issuer: "https://accounts.example.com"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sigstore-keyless", func(b *testing.B) {
		for b.Loop() {
			if _, err := kl.VerifyEntity(e, sum[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
