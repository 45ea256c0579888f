package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/catalog"
)

// TestInvalidOutputContained serves the fixtures whose output is
// well-formed bytes but invalid MCP (bad UTF-8, bad base64, a URI outside
// the plugin's schemes, malformed JSON, a repeated member) through a real catalog Set next to
// good.wasm: each read fails with an internal error naming the plugin, the
// Observer records the failure, repeated failures quarantine the plugin,
// and good.wasm keeps answering throughout.
func TestInvalidOutputContained(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	cfg := Config{PoolSize: 1, Limits: Limits{FailureThreshold: 3, Quarantine: time.Minute}}
	good := e.load(t, "good", cfg)
	bad := map[string]string{
		"badutf8": "badutf8://x",
		"badb64":  "badb64://x",
		"outside": "outside://x",
		"badjson": "badjson://x",
		"smuggle": "smuggle://x",
	}
	providers := []catalog.Provider{good}
	plugins := map[string]*Plugin{}
	for name := range bad {
		p := e.load(t, name, cfg)
		plugins[name] = p
		providers = append(providers, p)
	}
	set, err := catalog.NewSet(providers, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, uri := range bad {
		t.Run(name, func(t *testing.T) {
			for i := range 3 {
				_, err := set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, uri)
				ce := catalog.AsError(err)
				if ce == nil || ce.Kind != catalog.KindInternal || ce.Plugin != name {
					t.Fatalf("read %d of %s: got %v, want an internal error naming %s", i, uri, err, name)
				}
				res, err := set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, "good://hello")
				if err != nil || !strings.Contains(string(res.Contents[0]), "hello from wat") {
					t.Fatalf("good.wasm after %s: %v", name, err)
				}
			}
			if q, _ := plugins[name].Quarantined(); !q {
				t.Errorf("%s not quarantined after 3 invalid outputs", name)
			}
			if got := e.rec.classes(name); len(got) == 0 || got[len(got)-1] != ClassBadOutput {
				t.Errorf("observer saw %v for %s, want a bad_output failure", got, name)
			}
			_, err := set.ReadResource(ctx, catalog.Request{Principal: catalog.Anonymous()}, uri)
			if ce := catalog.AsError(err); ce == nil || ce.Plugin != name {
				t.Errorf("quarantined %s: %v", name, err)
			}
		})
	}
	if q, _ := good.Quarantined(); q {
		t.Error("good.wasm was quarantined")
	}
}
