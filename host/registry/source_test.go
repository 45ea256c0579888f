package registry

import (
	"context"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/oci"
	"github.com/corral-mcp/corral/host/oci/ocitest"
	"github.com/corral-mcp/corral/host/trust"
	"github.com/corral-mcp/corral/host/trust/trusttest"
)

// TestSourcesThroughTheBinding: plugins pulled from a registry load
// through the same binding and trust checks as directory drops: a signed
// one serves; one whose signature referrer is missing (stripped), is by
// an untrusted key, or whose manifest names another plugin is refused;
// a signer the lock requires is enforced.
func TestSourcesThroughTheBinding(t *testing.T) {
	ctx := context.Background()
	reg := ocitest.New(t, ocitest.Options{})
	pub, stranger := trusttest.NewMinisign(t), trusttest.NewMinisign(t)
	c := &oci.Client{}
	push := func(repo string, s spec, sign func([]byte) []byte) {
		t.Helper()
		data := specBytes(s)
		var sigs trust.Signatures
		if sign != nil {
			sigs.Minisig = sign(data)
		}
		ref, err := oci.ParseSource("oci://" + reg.Host + "/" + repo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Push(ctx, ref, data, sigs); err != nil {
			t.Fatal(err)
		}
	}
	push("corral/good:v1", spec{Name: "good", Scheme: "good", Text: "pulled"}, pub.Sign)
	push("corral/stripped:v1", spec{Name: "stripped", Scheme: "stripped"}, nil)
	push("corral/stranger:v1", spec{Name: "stranger", Scheme: "stranger"}, stranger.Sign)
	push("corral/impostor:v1", spec{Name: "good", Scheme: "imp"}, pub.Sign)
	push("corral/pinned:v1", spec{Name: "pinned", Scheme: "pinned"}, pub.Sign)

	plugins := map[string]config.Plugin{}
	for _, name := range []string{"good", "stripped", "stranger", "impostor", "pinned"} {
		p := config.DefaultPlugin()
		p.Source = "oci://" + reg.Host + "/corral/" + name + ":v1"
		plugins[name] = p
	}
	p := plugins["pinned"]
	p.Signer = "minisign:" + stranger.Public // the lock says another publisher
	plugins["pinned"] = p
	st, err := oci.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := (&oci.Resolver{Client: c, Store: st}).Bind(ctx, &config.Config{
		Plugins: config.Plugins{Trust: config.Trust{Minisign: []string{pub.Public}}}, // only pub is trusted
		Plugin:  plugins,
	})
	if err != nil {
		t.Fatal(err)
	}
	loader := &nativeLoader{}
	r := start(t, "", loader, cfg, nil)
	if s, err := read(r.Catalog(), "good://doc"); err != nil || s != "pulled" {
		t.Fatalf("good://doc = %q, %v; want the pulled plugin", s, err)
	}
	for name, reason := range map[string]string{
		"stripped": "the file is unsigned",
		"stranger": "which the trust policy does not trust",
		"impostor": `plugin.impostor binds this file, but its manifest names "good"`,
		"pinned":   "but it must be signed by minisign:" + stranger.Public,
	} {
		f := statusOf(r, cfg.Plugin[name].File)
		if f.State != StateRefused || !strings.Contains(f.Error, reason) {
			t.Errorf("%s: %+v, want refused: %s", name, f, reason)
		}
	}
}

func statusOf(r *Registry, path string) FileStatus {
	for _, f := range r.Status().Files {
		if f.Path == path {
			return f
		}
	}
	return FileStatus{}
}
