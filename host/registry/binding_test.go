package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
)

// specBytes is the content writeSpec writes, for digests.
func specBytes(s spec) []byte { b, _ := json.Marshal(s); return b }

func digestOf(b []byte) string { sum := sha256.Sum256(b); return hex.EncodeToString(sum[:]) }

// writeOld writes files whose modification time is already settled, so the
// first scan loads them all together, as at a start.
func writeOld(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
}

// recordingLoader wraps a Loader and records every Instantiate by file, so
// a test can tell which file received which settings.
type recordingLoader struct {
	Loader
	mu    sync.Mutex
	byDir map[string][]config.Plugin // base name → settings it was started with
}

func (l *recordingLoader) Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error) {
	m, err := l.Loader.Compile(ctx, path, data, digest, probe)
	if err != nil {
		return nil, err
	}
	return &recordingModule{Module: m, l: l, name: filepath.Base(path)}, nil
}

func (l *recordingLoader) started(name string) []config.Plugin {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byDir[name])
}

type recordingModule struct {
	Module
	l    *recordingLoader
	name string
}

func (m *recordingModule) Instantiate(ctx context.Context, s config.Plugin) (Plugin, error) {
	m.l.mu.Lock()
	if m.l.byDir == nil {
		m.l.byDir = map[string][]config.Plugin{}
	}
	m.l.byDir[m.name] = append(m.l.byDir[m.name], s)
	m.l.mu.Unlock()
	return m.Module.Instantiate(ctx, s)
}

// TestClaimsSettleWithoutOrder: who owns a scheme or a name depends on the
// configuration's bindings only, never on file names: the same files under
// names that sort either way give the same outcome, at start.
func TestClaimsSettleWithoutOrder(t *testing.T) {
	owner := spec{Name: "owner", Scheme: "x", Text: "rightful"}
	hijacker := spec{Name: "hijack", Scheme: "x", Text: "HIJACKED"}
	impostor := spec{Name: "owner", Scheme: "y", Text: "IMPOSTOR"}
	granted := func(b config.Binding) *config.Config {
		p := config.DefaultPlugin()
		p.Binding = b
		p.Grants.Config = map[string]string{"suffix": "+grants"}
		return &config.Config{Plugin: map[string]config.Plugin{"owner": p}}
	}
	for _, tc := range []struct {
		name     string
		rival    spec
		bind     func(dir, ownerFile string) config.Binding
		wantText string // x://doc; "" for none
		rivalOut string // the rival's refusal, a substring
	}{
		{"hijacker vs owner bound by digest", hijacker,
			func(string, string) config.Binding { return config.Binding{SHA256: digestOf(specBytes(owner))} },
			"rightful+grants", "which the configuration binds"},
		{"hijacker vs owner bound by file", hijacker,
			func(dir, f string) config.Binding { return config.Binding{File: filepath.Join(dir, f)} },
			"rightful+grants", "which the configuration binds"},
		{"hijacker vs unbound owner: both refused", hijacker,
			func(string, string) config.Binding { return config.Binding{} },
			"", "none is bound"},
		{"impostor of a name bound by file", impostor,
			func(dir, f string) config.Binding { return config.Binding{File: filepath.Join(dir, f)} },
			"rightful+grants", "does not match the binding"},
		{"impostor of a name bound by digest", impostor,
			func(string, string) config.Binding { return config.Binding{SHA256: digestOf(specBytes(owner))} },
			"rightful+grants", "does not match the binding"},
		{"impostor of an unbound name: both refused", impostor,
			func(string, string) config.Binding { return config.Binding{} },
			"", `name "owner" is also claimed`},
	} {
		for _, names := range [][2]string{{"aaa.wasm", "owner.wasm"}, {"zzz.wasm", "owner.wasm"}, {"owner.wasm", "aaa.wasm"}} {
			rivalFile, ownerFile := names[0], names[1]
			t.Run(tc.name+"/"+rivalFile+"+"+ownerFile, func(t *testing.T) {
				dir := t.TempDir()
				writeOld(t, dir, map[string][]byte{ownerFile: specBytes(owner), rivalFile: specBytes(tc.rival)})
				loader := &recordingLoader{Loader: &nativeLoader{}}
				r := start(t, dir, loader, granted(tc.bind(dir, ownerFile)), nil)
				rs := settledState(t, r, rivalFile, 2*time.Second)
				got, _ := read(r.Catalog(), "x://doc")
				if got != tc.wantText {
					t.Errorf("x://doc = %q, want %q\n%+v", got, tc.wantText, r.Status())
				}
				if s, err := read(r.Catalog(), "y://doc"); err == nil {
					t.Errorf("the impostor serves y://doc: %q", s)
				}
				if rs.State != StateRefused || !strings.Contains(rs.Error, tc.rivalOut) {
					t.Errorf("rival %+v, want refused with %q", rs, tc.rivalOut)
				}
				if n := loader.started(rivalFile); len(n) != 0 {
					t.Errorf("the rival was instantiated %d times (with %+v); want never", len(n), n)
				}
				if tc.wantText == "" {
					if os := fileState(r, ownerFile); os.State != StateRefused || os.Conflict == nil {
						t.Errorf("owner %+v, want refused with a conflict", os)
					}
				}
			})
		}
	}
}

// TestClaimsSettleWhenHotAdded: a file added while others serve gets the
// outcome it would get at a start with the same files.
func TestClaimsSettleWhenHotAdded(t *testing.T) {
	owner := spec{Name: "owner", Scheme: "x", Text: "rightful"}
	hijacker := spec{Name: "hijack", Scheme: "x", Text: "HIJACKED"}
	boundCfg := func(b []byte) *config.Config {
		p := config.DefaultPlugin()
		p.SHA256 = digestOf(b)
		return &config.Config{Plugin: map[string]config.Plugin{"owner": p}}
	}
	for _, tc := range []struct {
		name        string
		first, then string // the file there at start, the one added
		cfg         *config.Config
		want        string // x://doc after the add; "" for none
	}{
		{"hijacker added next to a bound owner", "owner", "hijack", boundCfg(specBytes(owner)), "rightful"},
		{"bound owner added next to a serving hijacker", "hijack", "owner", boundCfg(specBytes(owner)), "rightful"},
		{"unbound hijacker added next to an unbound owner", "owner", "hijack", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs := map[string]spec{"owner": owner, "hijack": hijacker}
			dir := t.TempDir()
			writeOld(t, dir, map[string][]byte{"b-" + tc.first + ".wasm": specBytes(specs[tc.first])})
			r := start(t, dir, &nativeLoader{}, tc.cfg, nil)
			if s, err := read(r.Catalog(), "x://doc"); err != nil || s != specs[tc.first].Text {
				t.Fatalf("before: x://doc = %q, %v", s, err)
			}
			added := "a-" + tc.then + ".wasm" // sorts first
			writeSpec(t, dir, added, specs[tc.then])
			eventually(t, "the added file settled", func() bool {
				s := fileState(r, added).State
				return s == StateServing || s == StateRefused
			})
			if s, _ := read(r.Catalog(), "x://doc"); s != tc.want {
				t.Errorf("after the add: x://doc = %q, want %q\n%+v", s, tc.want, r.Status())
			}
			// Removing the newcomer gives the first file back its claims.
			os.Remove(filepath.Join(dir, added))
			eventually(t, "the first file serves again", func() bool {
				s, _ := read(r.Catalog(), "x://doc")
				return s == specs[tc.first].Text
			})
		})
	}
}

// TestBindingCheckedBeforeCompile: a file bound by path whose digest does
// not match its pin, or whose plugin is disabled, is never compiled.
func TestBindingCheckedBeforeCompile(t *testing.T) {
	dir := t.TempDir()
	writeOld(t, dir, map[string][]byte{
		"pinned.wasm": specBytes(spec{Name: "pinned", Scheme: "p"}),
		"off.wasm":    specBytes(spec{Name: "off", Scheme: "o"}),
	})
	pinned := config.DefaultPlugin()
	pinned.Binding = config.Binding{File: filepath.Join(dir, "pinned.wasm"), SHA256: strings.Repeat("0", 64)}
	off := config.DefaultPlugin()
	off.Enabled = false
	off.File = filepath.Join(dir, "off.wasm")
	loader := &nativeLoader{}
	r := start(t, dir, loader, &config.Config{Plugin: map[string]config.Plugin{"pinned": pinned, "off": off}}, nil)
	if n := loader.compiles.Load(); n != 0 {
		t.Errorf("%d compiles, want none", n)
	}
	if f := fileState(r, "pinned.wasm"); f.State != StateRefused || !strings.Contains(f.Error, "the binding pins") {
		t.Errorf("pinned: %+v, want refused by its pin", f)
	}
	if f := fileState(r, "off.wasm"); f.State != StateDisabled || f.Plugin != "off" || f.Binding != "file" {
		t.Errorf("off: %+v, want disabled, named, bound by file", f)
	}
	// Enabling it compiles and serves it.
	on := off
	on.Enabled = true
	r.UpdateConfig(&config.Config{Plugin: map[string]config.Plugin{"pinned": pinned, "off": on}})
	eventually(t, "off enabled", func() bool { return fileState(r, "off.wasm").State == StateServing })
}

// TestStatusNamesUngranted: the status of a serving plugin names every
// capability it requests that is not granted, whether the manifest
// requires it, and the key that grants it; granting it clears the entry.
func TestStatusNamesUngranted(t *testing.T) {
	dir := t.TempDir()
	writeOld(t, dir, map[string][]byte{"a.wasm": specBytes(spec{Name: "a", Scheme: "a",
		Caps: []string{abi.CapLog, abi.CapFiles, abi.CapKV}, Required: []string{abi.CapFiles}})})
	withLog := config.DefaultPlugin()
	withLog.Grants.Log = true
	r := start(t, dir, &nativeLoader{}, &config.Config{Plugin: map[string]config.Plugin{"a": withLog}}, nil)
	want := []Ungranted{
		{Capability: abi.CapFiles, Required: true, Key: "plugin.a.grants.files"},
		{Capability: abi.CapKV, Key: "plugin.a.grants.kv"},
	}
	if diff := cmp.Diff(want, fileState(r, "a.wasm").Ungranted); diff != "" {
		t.Errorf("ungranted (-want +got):\n%s", diff)
	}
	all := withLog
	all.Grants.Files, all.Grants.KV = []string{dir}, true
	r.UpdateConfig(&config.Config{Plugin: map[string]config.Plugin{"a": all}})
	eventually(t, "grants applied", func() bool { return fileState(r, "a.wasm").Ungranted == nil })
}

// TestRebindingByConfig: a configuration change that binds a serving
// plugin's name to another file refuses it at once; reverting the change
// serves it again, without the file changing.
func TestRebindingByConfig(t *testing.T) {
	dir := t.TempDir()
	writeOld(t, dir, map[string][]byte{"a.wasm": specBytes(spec{Name: "a", Scheme: "a", Text: "served"})})
	r := start(t, dir, &nativeLoader{}, nil, nil)
	elsewhere := config.DefaultPlugin()
	elsewhere.File = filepath.Join(dir, "other.wasm")
	r.UpdateConfig(&config.Config{Plugin: map[string]config.Plugin{"a": elsewhere}})
	eventually(t, "a refused", func() bool {
		f := fileState(r, "a.wasm")
		return f.State == StateRefused && strings.Contains(f.Error, "the binding names the file")
	})
	if s, err := read(r.Catalog(), "a://doc"); err == nil {
		t.Errorf("a://doc still served: %q", s)
	}
	r.UpdateConfig(&config.Config{})
	eventually(t, "a served again", func() bool { s, _ := read(r.Catalog(), "a://doc"); return s == "served" })
}
