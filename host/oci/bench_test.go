package oci_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/oci"
	"github.com/corral-mcp/corral/host/oci/ocitest"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

// BenchmarkPullVerify is the pull of one bundled plugin by digest from a
// loopback registry (manifest, module, signature referrer, each checked
// against its digest) and the check of its signature: what a replica
// without the plugin in its store pays once.
func BenchmarkPullVerify(b *testing.B) {
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "build", "plugins", "issues.wasm"))
	if err != nil {
		b.Skipf("build/plugins/issues.wasm: %v (run make plugins)", err)
	}
	reg := ocitest.New(b, ocitest.Options{})
	key := trusttest.NewMinisign(b)
	c := &oci.Client{}
	ref, _ := oci.ParseSource("oci://" + reg.Host + "/corral/issues:v1")
	d, err := c.Push(ctx, ref, data, trust.Signatures{Minisig: key.Sign(data)})
	if err != nil {
		b.Fatal(err)
	}
	ref.Digest = d
	p, err := trust.Compile(config.Trust{Minisign: []string{key.Public}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		a, err := c.Pull(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Verify(a.Module, strings.TrimPrefix(a.ModuleDigest, "sha256:"), a.Signatures); err != nil {
			b.Fatal(err)
		}
	}
}
