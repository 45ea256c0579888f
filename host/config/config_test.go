package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLayering(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"plugins", "docs", "elsewhere"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := writeFile(t, dir, "corral.yaml", `
http:
  addr: 127.0.0.1:1000
log:
  level: debug
catalog:
  pageSize: 20
plugins:
  dir: plugins
plugin:
  files:
    grants:
      files: [docs]
      config: {data: issues.json}
`)
	type got struct {
		Addr, Level, Dir string
		PageSize         int
	}
	tests := []struct {
		name  string
		src   Source
		want  got
		files []string
	}{
		{"defaults", Source{Environ: []string{}, WorkDir: dir},
			got{"", "info", "", 100}, nil},
		{"file over defaults", Source{File: file, Environ: []string{}},
			got{"127.0.0.1:1000", "debug", filepath.Join(dir, "plugins"), 20}, []string{filepath.Join(dir, "docs")}},
		{"env over file", Source{File: file, WorkDir: dir, Environ: []string{
			"CORRAL_HTTP_ADDR=127.0.0.1:2000", "CORRAL_LOG_LEVEL=warn", "CORRAL_PLUGINS_DIR=elsewhere", "OTHER=1"}},
			got{"127.0.0.1:2000", "warn", filepath.Join(dir, "elsewhere"), 20}, []string{filepath.Join(dir, "docs")}},
		{"flags over env", Source{File: file, WorkDir: dir,
			Environ: []string{"CORRAL_HTTP_ADDR=127.0.0.1:2000", "CORRAL_CATALOG_PAGE_SIZE=30"},
			Flags:   map[string]any{"http.addr": "127.0.0.1:3000", "log.level": "error"}},
			got{"127.0.0.1:3000", "error", filepath.Join(dir, "plugins"), 30}, []string{filepath.Join(dir, "docs")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			g := got{cfg.HTTP.Addr, cfg.Log.Level, cfg.Plugins.Dir, cfg.Catalog.PageSize}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(tt.files, cfg.PluginSettings("files").Grants.Files); diff != "" {
				t.Errorf("files roots (-want +got)\n%s", diff)
			}
		})
	}
}

func TestPluginDefaults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "c.toml", `
[plugin.issues]
enabled = false
[plugin.issues.limits]
timeout = "2s"
[plugin.issues.grants.config]
data = "issues.json"
`)
	cfg, err := Load(Source{File: file, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultPlugin()
	want.Enabled = false
	want.Limits.Timeout = 2 * time.Second
	want.Grants.Config = map[string]string{"data": "issues.json"}
	if diff := cmp.Diff(want, cfg.PluginSettings("issues")); diff != "" {
		t.Errorf("issues (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(DefaultPlugin(), cfg.PluginSettings("unlisted")); diff != "" {
		t.Errorf("unlisted (-want +got)\n%s", diff)
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, body string
		env              []string
		want             []string // substrings of the error
	}{
		{"bad engine", "a.yaml", "plugin:\n  files:\n    engine: v8\n", nil,
			[]string{"a.yaml:3: plugin.files.engine: unknown engine \"v8\" (known: wazero, wasmtime)"}},
		{"bad duration", "b.yaml", "log:\n  level: info\nplugin:\n  x:\n    limits:\n      timeout: soon\n", nil,
			[]string{"b.yaml:6: plugin.x.limits.timeout"}},
		{"unknown key", "c.yaml", "http:\n  addr: 127.0.0.1:1\n  alowedOrigins: [x]\n", nil,
			[]string{"c.yaml:3: http.alowedOrigins: unknown key"}},
		{"case typo", "d.yaml", "plugins:\n  datadir: x\n", nil,
			[]string{`d.yaml:2: plugins.datadir: unknown key (did you mean "plugins.dataDir"`}},
		{"two problems", "e.yaml", "log:\n  level: loud\ncatalog:\n  pageSize: 0\n", nil,
			[]string{"e.yaml:2: log.level", "e.yaml:4: catalog.pageSize"}},
		{"toml line", "f.toml", "[log]\nlevel = \"info\"\n\n[plugin.files.limits]\nmemoryPages = 3\n", nil,
			[]string{"f.toml:5: plugin.files.limits.memoryPages: must be between 64"}},
		{"syntax error", "g.yaml", "log:\n  level: [\n", nil, []string{"g.yaml:"}},
		{"env named", "h.yaml", "log:\n  level: info\n", []string{"CORRAL_LOG_LEVEL=chatty"},
			[]string{"env CORRAL_LOG_LEVEL: log.level"}},
		{"bad extension", "i.json", "{}", nil, []string{"unknown format"}},
		{"cursor key", "j.yaml", "catalog:\n  cursorKey: zz\n", nil, []string{"j.yaml:2: catalog.cursorKey: must be hex"}},
		{"scalar for table", "k.yaml", "http: 5\n", nil, []string{"k.yaml:1: http: must be a table"}},
		{"metrics bound", "l.yaml", "metrics:\n  pluginHistograms: -1\n", []string{"CORRAL_LOG_LEVEL=info"},
			[]string{"l.yaml:2: metrics.pluginHistograms: must be between 0 and 100000, got -1"}},
		{"trusted proxy", "l.yaml", "http:\n  trustedProxies: [10.0.0.0/8, proxy.example]\n", nil,
			[]string{`l.yaml:2: http.trustedProxies: want a CIDR prefix (10.0.0.0/8) or an IP address, got "proxy.example"`}},
		{"forwarded header", "m.yaml", "http:\n  forwardedHeader: X-Real-IP\n", nil,
			[]string{`m.yaml:2: http.forwardedHeader: want X-Forwarded-For or Forwarded, got "X-Real-IP"`}},
		{"file outside plugins.dir", "fb1.yaml", "plugins:\n  dir: p\nplugin:\n  x:\n    file: q/x.wasm\n", nil,
			[]string{"fb1.yaml:5: plugin.x.file: ", "is not in plugins.dir"}},
		{"file bound twice", "fb2.yaml", "plugin:\n  x:\n    file: p/x.wasm\n  y:\n    file: p/x.wasm\n", nil,
			[]string{"fb2.yaml:5: plugin.y.file: ", "is already bound to plugin x"}},
		{"file not a plugin", "fb3.yaml", "plugin:\n  x:\n    file: x.so\n", nil,
			[]string{"fb3.yaml:3: plugin.x.file: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, tt.file, tt.body)
			env := tt.env
			if env == nil {
				env = []string{}
			}
			_, err := Load(Source{File: file, Environ: env})
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *config.Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEnvNames(t *testing.T) {
	want := map[string]string{
		"http.addr":           "CORRAL_HTTP_ADDR",
		"plugins.dir":         "CORRAL_PLUGINS_DIR",
		"log.level":           "CORRAL_LOG_LEVEL",
		"plugins.dataDir":     "CORRAL_PLUGINS_DATA_DIR",
		"http.allowedOrigins": "CORRAL_HTTP_ALLOWED_ORIGINS",
	}
	got := map[string]string{}
	for _, kv := range Keys() {
		if _, ok := want[kv[0]]; ok {
			got[kv[0]] = kv[1]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestEnvList(t *testing.T) {
	cfg, err := Load(Source{Environ: []string{"CORRAL_HTTP_ALLOWED_ORIGINS=http://a.test, https://b.test"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"http://a.test", "https://b.test"}, cfg.HTTP.AllowedOrigins); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestTrustedProxyPrefixes(t *testing.T) {
	cfg, err := Load(Source{Environ: []string{"CORRAL_HTTP_TRUSTED_PROXIES=10.1.2.3/8, 192.0.2.7,::ffff:192.0.2.8, fd00::/8"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.HTTP.TrustedProxyPrefixes() {
		got = append(got, p.String())
	}
	if diff := cmp.Diff([]string{"10.0.0.0/8", "192.0.2.7/32", "192.0.2.8/32", "fd00::/8"}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if cfg.HTTP.ForwardedHeader != "X-Forwarded-For" {
		t.Errorf("forwardedHeader default = %q", cfg.HTTP.ForwardedHeader)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "fe80::1%eth0"} {
		if _, err := Load(Source{Environ: []string{"CORRAL_HTTP_TRUSTED_PROXIES=" + bad}}); err == nil {
			t.Errorf("trustedProxies %q accepted", bad)
		}
	}
}

func TestWatcherReload(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "corral.yaml", "http:\n  addr: 127.0.0.1:1\nlog:\n  level: info\n")
	src := Source{File: file, Environ: []string{}}
	cfg, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reloads []*Config
	w := NewWatcher(src, cfg, WatchOptions{OnReload: func(_, n *Config) {
		mu.Lock()
		reloads = append(reloads, n)
		mu.Unlock()
	}})

	steps := []struct {
		name      string
		body      string
		wantErr   bool
		wantLevel string
		wantAddr  string
		reloads   int
	}{
		{"good", "http:\n  addr: 127.0.0.1:2\nlog:\n  level: debug\nplugin:\n  a:\n    enabled: false\n", false, "debug", "127.0.0.1:1", 1},
		{"bad keeps running", "log:\n  level: shouty\n", true, "debug", "127.0.0.1:1", 1},
		{"unchanged", "http:\n  addr: 127.0.0.1:2\nlog:\n  level: debug\nplugin:\n  a:\n    enabled: false\n", false, "debug", "127.0.0.1:1", 1},
		{"plugin change", "log:\n  level: debug\nplugin:\n  a:\n    enabled: true\n", false, "debug", "127.0.0.1:1", 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			writeFile(t, dir, "corral.yaml", st.body)
			err := w.Reload()
			if (err != nil) != st.wantErr {
				t.Fatalf("Reload error = %v, want error %v", err, st.wantErr)
			}
			cur := w.Current()
			if cur.Log.Level != st.wantLevel || cur.HTTP.Addr != st.wantAddr {
				t.Errorf("in force: level %q addr %q, want %q %q", cur.Log.Level, cur.HTTP.Addr, st.wantLevel, st.wantAddr)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reloads) != st.reloads {
				t.Errorf("%d OnReload calls, want %d", len(reloads), st.reloads)
			}
		})
	}
}

// TestWatcherReloadsOneAtATime: SIGHUP and a file event may reload at the
// same moment; one change is applied once, not once per caller (without the
// lock this failed in most runs of 300 rounds).
func TestWatcherReloadsOneAtATime(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "corral.yaml", "log:\n  level: info\n")
	src := Source{File: file, Environ: []string{}}
	for round := range 300 {
		writeFile(t, dir, "corral.yaml", "log:\n  level: info\n")
		cfg, err := Load(src)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		calls := 0
		w := NewWatcher(src, cfg, WatchOptions{OnReload: func(_, _ *Config) {
			mu.Lock()
			calls++
			mu.Unlock()
		}})
		writeFile(t, dir, "corral.yaml", "log:\n  level: warn\n")
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { w.Reload() })
		}
		wg.Wait()
		if calls != 1 {
			t.Fatalf("round %d: %d OnReload calls for one change, want 1", round, calls)
		}
	}
}

func TestWatcherSeesFileChange(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "corral.yaml", "log:\n  level: info\n")
	src := Source{File: file, Environ: []string{}}
	cfg, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Config, 1)
	w := NewWatcher(src, cfg, WatchOptions{Debounce: 20 * time.Millisecond, OnReload: func(_, n *Config) {
		select {
		case done <- n:
		default:
		}
	}})
	ctx := t.Context()
	go w.Run(ctx)
	// Write until the watcher (which may still be starting) sees it.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		// Replace by rename, as editors do.
		tmp := writeFile(t, dir, "corral.yaml.tmp", "log:\n  level: warn\n")
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-done:
			if n.Log.Level != "warn" {
				t.Fatalf("level %q after reload, want warn", n.Log.Level)
			}
			return
		case <-tick.C:
		case <-deadline:
			t.Fatal("no reload within 5s")
		}
	}
}

// TestDocumented keeps docs/configuration.md in step with the schema.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range schema {
		long := strings.TrimSuffix(strings.ReplaceAll(key, "plugin.*.", "plugin.<name>."), ".*")
		long = strings.ReplaceAll(long, ".*.", ".<key>.") // grants.config.<key>.env
		short := strings.TrimPrefix(long, "plugin.<name>.")
		if !strings.Contains(string(doc), "`"+long) && !strings.Contains(string(doc), "`"+short) {
			t.Errorf("key %s is not documented", key)
		}
		if !strings.Contains(key, "*") && !strings.Contains(string(doc), envName(key)) {
			t.Errorf("env %s of %s is not documented", envName(key), key)
		}
	}
}

// TestBinding: plugin.<name>.file resolves against the file's directory
// and, with sha256, makes up one Binding; BoundName finds the name from a
// path or a digest alone.
func TestBinding(t *testing.T) {
	dir := t.TempDir()
	digest := strings.Repeat("ab", 32)
	file := writeFile(t, dir, "corral.yaml", "plugins:\n  dir: plugins\nplugin:\n  x:\n    file: plugins/x.wasm\n    sha256: "+strings.ToUpper(digest)+"\n  y:\n    sha256: "+strings.Repeat("cd", 32)+"\n")
	cfg, err := Load(Source{File: file, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	xPath := filepath.Join(dir, "plugins", "x.wasm")
	if got, want := cfg.PluginSettings("x").Binding, (Binding{File: xPath, SHA256: digest}); got != want {
		t.Errorf("x binding %+v, want %+v", got, want)
	}
	for _, tc := range []struct{ path, digest, want string }{
		{xPath, "other", "x"}, // by path, whatever the digest (Check then refuses it)
		{filepath.Join(dir, "plugins", "z.wasm"), strings.Repeat("cd", 32), "y"},
		{filepath.Join(dir, "plugins", "z.wasm"), digest, ""}, // x's digest, but x is bound to another path
		{filepath.Join(dir, "plugins", "z.wasm"), "other", ""},
	} {
		if got := cfg.Bindings().BoundName(tc.path, tc.digest); got != tc.want {
			t.Errorf("BoundName(%s, %.8s) = %q, want %q", filepath.Base(tc.path), tc.digest, got, tc.want)
		}
	}
	b := cfg.PluginSettings("x").Binding
	if err := b.Check(xPath, digest); err != nil {
		t.Errorf("Check of the bound file: %v", err)
	}
	for _, bad := range [][2]string{{xPath, "other"}, {filepath.Join(dir, "plugins", "z.wasm"), digest}} {
		if err := b.Check(bad[0], bad[1]); !errors.Is(err, ErrNotBound) {
			t.Errorf("Check(%s, %.8s) = %v, want ErrNotBound", bad[0], bad[1], err)
		}
	}
}
