package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/plugin"
)

// Interface guards of the package's exported types (plugin.go guards
// catalog.Provider).
var (
	_ plugin.Observer   = nil
	_ plugin.Store      = (*plugin.MemoryStore)(nil)
	_ plugin.Notifier   = nil
	_ plugin.Engine     = nil
	_ plugin.Instance   = nil
	_ plugin.Function   = nil
	_ plugin.Memory     = nil
	_ plugin.Signature  = plugin.Signature{}
	_ plugin.ErrorClass = plugin.ClassOK
)

func watFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadWAT(t testing.TB, rt *plugin.Runtime, name string) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	m, err := rt.Compile(ctx, watFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(ctx, m, plugin.Config{Source: name + ".wasm", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

func newRuntime(t testing.TB) *plugin.Runtime {
	t.Helper()
	rt, err := plugin.NewRuntime(context.Background(), plugin.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// TestConflictingClaim: conflict.wasm claims good.wasm's scheme; the
// catalog refuses the pair and names both plugins.
func TestConflictingClaim(t *testing.T) {
	rt := newRuntime(t)
	good, conflict := loadWAT(t, rt, "good"), loadWAT(t, rt, "conflict")
	_, err := catalog.NewSet([]catalog.Provider{good, conflict}, catalog.Options{})
	if err == nil {
		t.Fatal("NewSet accepted two plugins claiming scheme good")
	}
	if !strings.Contains(err.Error(), "good") || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("error %q does not name both plugins", err)
	}
	if _, err := catalog.NewSet([]catalog.Provider{good}, catalog.Options{}); err != nil {
		t.Errorf("good alone: %v", err)
	}
}

// Go guests built by `make plugins`. Tests using them skip when the files
// are missing; `make test` builds them first.
var (
	goOnce sync.Once
	goRT   *plugin.Runtime
	goMods = map[string]*plugin.Module{}
	goErr  error
)

func goGuest(t testing.TB, name string) (*plugin.Runtime, *plugin.Module) {
	t.Helper()
	path := filepath.Join("..", "..", "build", "plugins", name+".wasm")
	wasm, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is missing; run make plugins", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	goOnce.Do(func() {
		goRT, goErr = plugin.NewRuntime(context.Background(), plugin.RuntimeConfig{CacheDir: filepath.Join(os.TempDir(), "corral-plugin-test-cache")})
	})
	if goErr != nil {
		t.Fatal(goErr)
	}
	if m, ok := goMods[name]; ok {
		return goRT, m
	}
	m, err := goRT.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	goMods[name] = m
	return goRT, m
}

func TestGoGuestConformance(t *testing.T) {
	rt, m := goGuest(t, "conformance")
	ctx := context.Background()
	p, err := rt.Load(ctx, m, plugin.Config{Source: "conformance.wasm", PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if p.Name() == "" || len(p.Manifest().Resources) == 0 {
		t.Fatalf("manifest = %+v", p.Manifest())
	}

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				req := fmt.Sprintf(`{"uri":"test://static-text","principal":{"id":"p%d-%d"}}`, w, i)
				res0, err := p.Call(ctx, catalog.Call{Op: abi.OpReadResource, Request: []byte(req)})
				if err != nil {
					errs <- err
					continue
				}
				out := res0.Body
				var res abi.ReadResourceResult
				if err := json.Unmarshal(out, &res); err != nil || len(res.Contents) != 1 ||
					!strings.Contains(string(res.Contents[0]), `"uri":"test://static-text"`) {
					errs <- fmt.Errorf("read = %s (%v)", out, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// An unknown resource is a guest-declared error, not a failure.
	res, err := p.Call(ctx, catalog.Call{Op: abi.OpReadResource, Request: []byte(`{"uri":"test://nope","principal":{"id":"x"}}`)})
	if err != nil || res.Status != abi.StatusError {
		t.Errorf("unknown resource: %v, status %d, want abi.StatusError", err, res.Status)
	}
}

// TestGoGuestLoads loads every Go guest the build produced with no grants.
func TestGoGuestLoads(t *testing.T) {
	for _, name := range []string{"files"} {
		t.Run(name, func(t *testing.T) {
			rt, m := goGuest(t, name)
			p, err := rt.Load(context.Background(), m, plugin.Config{Source: name + ".wasm", PoolSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			if p.Manifest().ABI != abi.Major || len(p.Granted()) != 0 {
				t.Errorf("manifest = %+v, granted %v", p.Manifest(), p.Granted())
			}
		})
	}
}
