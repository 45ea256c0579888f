package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEngines: plugins.engine picks the server's engine (from a file or
// CORRAL_PLUGINS_ENGINE), a plugin entry may name its own, and unknown
// names are refused with the key.
func TestEngines(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		env        []string
		server     string
		plugins    map[string]string // plugin name -> its Engine setting
		err        string
	}{
		{name: "default", body: "log:\n  level: info\n", server: EngineWazero},
		{name: "server wasmtime", body: "plugins:\n  engine: wasmtime\n", server: EngineWasmtime},
		{name: "env", body: "log:\n  level: info\n", env: []string{"CORRAL_PLUGINS_ENGINE=wasmtime"}, server: EngineWasmtime},
		{name: "per plugin", body: "plugin:\n  a:\n    engine: wasmtime\n  b:\n    enabled: true\n",
			server: EngineWazero, plugins: map[string]string{"a": EngineWasmtime, "b": "", "unlisted": ""}},
		{name: "bad server", body: "plugins:\n  engine: v8\n", err: `a.yaml:2: plugins.engine: unknown engine "v8" (known: wazero, wasmtime)`},
		{name: "bad env", body: "log:\n  level: info\n", env: []string{"CORRAL_PLUGINS_ENGINE=WASMTIME"}, err: "env CORRAL_PLUGINS_ENGINE: plugins.engine: unknown engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if env == nil {
				env = []string{}
			}
			cfg, err := Load(Source{File: writeFile(t, dir, "a.yaml", tt.body), Environ: env})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Plugins.Engine != tt.server {
				t.Errorf("plugins.engine = %q, want %q", cfg.Plugins.Engine, tt.server)
			}
			got := map[string]string{}
			for name := range tt.plugins {
				got[name] = cfg.PluginSettings(name).Engine
			}
			if diff := cmp.Diff(tt.plugins, got, cmpEmptyMap); diff != "" {
				t.Errorf("plugin engines (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestEngineNeedsRestart(t *testing.T) {
	a := &Config{Plugins: Plugins{Engine: EngineWazero}}
	b := &Config{Plugins: Plugins{Engine: EngineWasmtime}}
	if diff := cmp.Diff([]string{"plugins.engine"}, RestartKeys(a, b)); diff != "" {
		t.Errorf("restart keys (-want +got):\n%s", diff)
	}
}
