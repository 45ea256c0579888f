package registry

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// wasmRuntime is a runtime on the compilation cache make's runs share.
func wasmRuntime(t *testing.T) *plugin.Runtime {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: filepath.Join(buildDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) }) // after the registry's cleanup
	return rt
}

// servingPlugin returns the Wasm plugin serving from the file name.
func servingPlugin(r *Registry, name string) *plugin.Plugin {
	r.mu.Lock()
	defer r.mu.Unlock()
	for path, l := range r.serving {
		if filepath.Base(path) == name && l.plugin != nil {
			p, _ := l.plugin.Plugin.(*plugin.Plugin)
			return p
		}
	}
	return nil
}

// sleepyFiles serves the files plugin over root, asleep after 20ms.
func sleepyFiles(t *testing.T, root string, edit func(*config.Plugin)) (*Registry, *plugin.Runtime, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a Go guest")
	}
	rt := wasmRuntime(t)
	dir := t.TempDir()
	writeRaw(t, dir, "files.wasm", builtPlugin(t, "files"))
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "files.wasm"), old, old)
	s := config.DefaultPlugin()
	s.Grants.Files = []string{root}
	s.Limits.SleepAfter = 20 * time.Millisecond
	if edit != nil {
		edit(&s)
	}
	cfg := &config.Config{Plugin: map[string]config.Plugin{"files": s}}
	r := startWith(t, Options{
		Dir: dir, Loader: WasmLoader(rt), Config: cfg,
		Debounce: 30 * time.Millisecond, Rescan: 500 * time.Millisecond, DrainGrace: 20 * time.Millisecond,
		SetOptions: catalog.Options{Pages: catalog.NewPageCache(0), ListBudget: 250 * time.Millisecond},
	}, nil)
	return r, rt, dir
}

// sleeping waits until the plugin serving files.wasm sleeps.
func sleeping(t *testing.T, r *Registry) *plugin.Plugin {
	t.Helper()
	var p *plugin.Plugin
	within(t, 10*time.Second, "files asleep", func() bool {
		p = servingPlugin(r, "files.wasm")
		return p != nil && fileState(r, "files.wasm").Life == plugin.LifeSleeping
	})
	return p
}

// listFiles lists every resource as principal id and returns the names of
// the files listed and the page's skips.
func listFiles(t *testing.T, r *Registry, id string) ([]string, []catalog.Skip) {
	t.Helper()
	var names []string
	var skips []catalog.Skip
	cursor := ""
	for {
		page, err := r.Catalog().Current().List(context.Background(), catalog.Request{Principal: abi.Principal{ID: id}}, catalog.ListResources, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var res struct{ URI string }
			json.Unmarshal(it, &res)
			if strings.HasPrefix(res.URI, "file://") && strings.HasSuffix(res.URI, ".txt") {
				names = append(names, filepath.Base(res.URI))
			}
		}
		skips = append(skips, page.Skipped...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	slices.Sort(names)
	return names, skips
}

// TestSleepWakeThroughRegistry: a plugin served by the registry goes to
// sleep, wakes on a read, sleeps again; its state is in Status.
func TestSleepWakeThroughRegistry(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha"), 0o644)
	r, rt, _ := sleepyFiles(t, root, nil)
	p := sleeping(t, r)
	before := rt.Compiles()
	if s, err := read(r.Catalog(), "file://"+filepath.Join(root, "a.txt")); err != nil || s != "alpha" {
		t.Fatalf("read while asleep = %q, %v", s, err)
	}
	if p.Wakes() != 1 || rt.Compiles() != before+1 {
		t.Errorf("one read woke it %d times and compiled %d times, want 1 and 1", p.Wakes(), rt.Compiles()-before)
	}
	within(t, 10*time.Second, "asleep again", func() bool { return p.Sleeps() >= 2 && p.Life() == plugin.LifeSleeping })
}

// TestSleepingListerStillLists: a plugin listing resources dynamically
// is served from its last good page while it sleeps, woken in the
// background to refresh that page, and a principal with no page kept
// waits for its wake-up instead of seeing it vanish.
func TestSleepingListerStillLists(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha"), 0o644)
	r, _, _ := sleepyFiles(t, root, nil)
	p := sleeping(t, r)
	// Nothing kept for alice: her list waits for the wake-up.
	names, skips := listFiles(t, r, "alice")
	if !slices.Equal(names, []string{"a.txt"}) || len(skips) != 0 {
		t.Fatalf("first list while asleep = %v, skips %v; want [a.txt] and none", names, skips)
	}
	if p.Wakes() != 1 {
		t.Errorf("%d wake-ups, want 1", p.Wakes())
	}
	sleeping(t, r)
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("beta"), 0o644)
	// Asleep: her last good page at once, and a refresh in the background.
	names, skips = listFiles(t, r, "alice")
	if !slices.Equal(names, []string{"a.txt"}) || len(skips) != 1 || skips[0].Reason != catalog.SkipAsleep || !skips[0].Cached {
		t.Fatalf("list while asleep = %v, skips %+v; want the kept page [a.txt], served asleep", names, skips)
	}
	// The refresh keeps the page as it is now: a later list while the
	// plugin sleeps serves b.txt too.
	within(t, 10*time.Second, "refreshed page served while asleep", func() bool {
		if fileState(r, "files.wasm").Life != plugin.LifeSleeping || p.Wakes() < 2 {
			return false
		}
		names, skips := listFiles(t, r, "alice")
		return slices.Equal(names, []string{"a.txt", "b.txt"}) && len(skips) == 1 && skips[0].Reason == catalog.SkipAsleep
	})
}

// TestLimitsChangedWhileAsleep: settings changed while a plugin sleeps
// compile nothing, and apply when it wakes up.
func TestLimitsChangedWhileAsleep(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("x", 4096)), 0o644)
	r, rt, _ := sleepyFiles(t, root, nil)
	old := sleeping(t, r)
	before := rt.Compiles()
	cfg := *r.Config()
	s := cfg.Plugin["files"]
	s.Limits.MaxResponseBytes = 1024
	s.Limits.MemoryPages = 300 // another engine: compiled again at the wake-up
	cfg.Plugin = map[string]config.Plugin{"files": s}
	r.UpdateConfig(&cfg)
	within(t, 10*time.Second, "new settings serving", func() bool {
		p := servingPlugin(r, "files.wasm")
		return p != nil && p != old
	})
	if n := rt.Compiles() - before; n != 0 {
		t.Errorf("a settings change while asleep compiled %d times", n)
	}
	if got := fileState(r, "files.wasm").Life; got != plugin.LifeSleeping {
		t.Errorf("the plugin with new settings is %s, want sleeping", got)
	}
	_, err := read(r.Catalog(), "file://"+filepath.Join(root, "a.txt"))
	if err == nil || !strings.Contains(err.Error(), "over the limit of 1024") {
		t.Fatalf("read of 4 KiB with maxResponseBytes 1024 = %v, want the response refused", err)
	}
	if n := rt.Compiles() - before; n != 1 {
		t.Errorf("the wake-up under new limits compiled %d times, want 1", n)
	}
	if old.Wakes() != 0 {
		t.Errorf("the plugin with the old settings woke up")
	}
}

// TestReplacedWhileAsleep: a plugin file replaced while its plugin sleeps
// is reloaded; the old version is retired without waking up.
func TestReplacedWhileAsleep(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha"), 0o644)
	r, _, dir := sleepyFiles(t, root, nil)
	old := sleeping(t, r)
	first := fileState(r, "files.wasm").Digest
	writeRaw(t, dir, "files.wasm", withCustomSection(builtPlugin(t, "files"), "v2"))
	within(t, time.Minute, "new version serving", func() bool {
		d := fileState(r, "files.wasm").Digest
		return d != "" && d != first
	})
	if s, err := read(r.Catalog(), "file://"+filepath.Join(root, "a.txt")); err != nil || s != "alpha" {
		t.Fatalf("read after the replacement = %q, %v", s, err)
	}
	if old.Wakes() != 0 {
		t.Errorf("the replaced version woke up %d times", old.Wakes())
	}
	within(t, 10*time.Second, "old version closed", func() bool { return old.Life() == plugin.LifeSleeping && isClosed(old) })
}

// isClosed reports whether p refuses calls as closed.
func isClosed(p *plugin.Plugin) bool {
	_, err := p.Call(context.Background(), catalog.Call{Op: abi.OpDescribe, Request: []byte("{}")})
	return err != nil && strings.Contains(err.Error(), plugin.ErrClosed.Error())
}
