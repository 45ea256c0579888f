package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// BenchmarkSleepingPlugins is what a warm restart of 100 sleeping Go
// guests of 1,000 resources each holds, per plugin: each a distinct copy
// of build/plugins/conformance.wasm (a custom section apart) whose
// metadata cache entry describes the resources of plugins/bench/fixture,
// opened as the registry opens unchanged files (by their recorded digest,
// described from the cache: nothing read or compiled), loaded asleep and
// listed by one catalog.Set. It reports, with the runtime's release off and on:
//
//   - retained-B/plugin: heap memory the process keeps (objects, free
//     pages not returned to the system) once the plugins are idle, as an
//     idle server finds it (no collection forced by the benchmark);
//   - live-B/plugin: the objects left after a collection, the plugins'
//     own metadata (the same with the release off or on).
func BenchmarkSleepingPlugins(b *testing.B) {
	src := filepath.Join("..", "..", "build", "plugins", "conformance.wasm")
	wasm, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		b.Skipf("%s is missing; run make plugins", src)
	}
	if err != nil {
		b.Fatal(err)
	}
	const n, resources = 100, 1000
	dir, meta := b.TempDir(), b.TempDir()
	var paths []string
	for i := range n {
		name := fmt.Sprintf("bfx%03d", i)
		// A custom section (id 0, name "copy") makes each file distinct.
		body := append([]byte{4, 'c', 'o', 'p', 'y'}, name...)
		data := append(append(append([]byte(nil), wasm...), 0, byte(len(body))), body...)
		path := filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
	}
	for _, release := range []time.Duration{0, time.Second} { // corral serve: 1 s
		b.Run(fmt.Sprintf("release=%s", release), func(b *testing.B) {
			for b.Loop() {
				retained, live := sleepingFleet(b, paths, meta, resources, release)
				b.ReportMetric(float64(retained)/n, "retained-B/plugin")
				b.ReportMetric(float64(live)/n, "live-B/plugin")
			}
		})
	}
}

// sleepingFleet opens and loads asleep the plugin files at paths, their
// descriptions written into a metadata cache in meta first, and returns
// the heap memory kept once idle and the live heap after a collection,
// each above what the process held before.
func sleepingFleet(b *testing.B, paths []string, meta string, resources int, release time.Duration) (retained, live int64) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, RuntimeConfig{MetaDir: meta, ReleaseAfter: release})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	cfg, err := Config{SleepAfter: time.Hour}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	digests := make([]string, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(data)
		digests[i] = hex.EncodeToString(sum[:])
		e := rt.metaKey(digests[i], rt.keyFor(cfg))
		e.Minor, e.Manifest = abi.Minor, fixtureManifest(b, fmt.Sprintf("bfx%03d", i), resources)
		file, key := rt.metaPath(e)
		if err := atomicfile.Write(file, encodeMeta(key, e), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	debug.FreeOSMemory()
	before := readHeap()
	b.StartTimer()
	var ps []catalog.Provider
	for i, path := range paths {
		// As the registry opens an unchanged file: by its recorded digest,
		// reading nothing.
		m, err := rt.Open(ctx, File{Path: path, Digest: digests[i]}, cfg)
		if err != nil {
			b.Fatal(err)
		}
		p, err := rt.Load(ctx, m, Config{Source: path, SleepAfter: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		if p.Life() != LifeSleeping {
			b.Fatalf("%s loaded %s, want asleep", path, p.Life())
		}
		defer p.Close(ctx)
		ps = append(ps, p)
	}
	if rt.Compiles() != 0 {
		b.Fatalf("%d compiles, want none", rt.Compiles())
	}
	set, err := catalog.NewSet(ps, catalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if release > 0 {
		for deadline := time.Now().Add(10 * time.Second); rt.Releases() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("no release")
			}
		}
	} else {
		time.Sleep(100 * time.Millisecond)
	}
	retained = readHeap().kept() - before.kept()
	runtime.GC()
	live = int64(readHeap().objects) - int64(before.objects)
	runtime.KeepAlive(set)
	b.StartTimer()
	return retained, live
}

// heap is the Go heap as runtime/metrics reports it: live (or not yet
// collected) objects, and the pages it keeps without objects (free ones
// not returned to the system, and the unused parts of spans).
type heap struct{ objects, free uint64 }

func (h heap) kept() int64 { return int64(h.objects + h.free) }

func readHeap() heap {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	return heap{objects: s[0].Value.Uint64(), free: s[1].Value.Uint64() + s[2].Value.Uint64()}
}

// fixtureManifest is the description of plugins/bench/fixture named
// name: a document and resources-1 items, a prompt and a tool.
func fixtureManifest(b *testing.B, name string, resources int) json.RawMessage {
	m := abi.Manifest{Name: name, Version: "1.0.0", ABI: abi.Major, Title: "Benchmark fixture",
		Schemes: []string{name}, Capabilities: []string{abi.CapNotify}}
	m.Resources = append(m.Resources, abi.Resource{URI: name + "://doc", Name: "doc", Title: "1 KiB document", MimeType: "text/plain"})
	for i := 1; i < resources; i++ {
		m.Resources = append(m.Resources, abi.Resource{URI: fmt.Sprintf("%s://item/%04d", name, i), Name: fmt.Sprintf("item-%04d", i), MimeType: "text/plain"})
	}
	m.Prompts = []abi.Prompt{{Name: "greet-" + name, Description: "A greeting with two arguments",
		Arguments: []abi.PromptArgument{{Name: "name", Required: true}, {Name: "style", Required: true}}}}
	m.Tools = []abi.Tool{{Name: "touch-" + name, Description: "Notify the document's subscribers", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	raw, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
