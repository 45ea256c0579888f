package main

import (
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

func TestCheckEngines(t *testing.T) {
	haveWasmtime := plugin.CheckEngine(plugin.EngineWasmtime) == nil
	tests := []struct {
		name string
		cfg  config.Config
		want string // in the error; "" for none
	}{
		{"default", config.Config{Plugins: config.Plugins{Engine: "wazero"}}, ""},
		{"server wasmtime", config.Config{Plugins: config.Plugins{Engine: "wasmtime"}}, "plugins.engine: plugin: engine \"wasmtime\" is not in this build"},
		{"plugin wasmtime", config.Config{Plugins: config.Plugins{Engine: "wazero"},
			Plugin: map[string]config.Plugin{"a": {}, "b": {Engine: "wasmtime"}}}, "plugin.b.engine: plugin: engine \"wasmtime\" is not in this build"},
		{"unknown", config.Config{Plugin: map[string]config.Plugin{"a": {Engine: "v8"}}}, `plugin.a.engine: plugin: unknown engine "v8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if haveWasmtime && strings.Contains(want, "wasmtime") {
				want = ""
			}
			err := checkEngines(&tt.cfg)
			switch {
			case want == "" && err != nil:
				t.Errorf("err = %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("err = %v, want %q", err, want)
			case want != "" && strings.Contains(want, "wasmtime") && !strings.Contains(err.Error(), "make build-wasmtime"):
				t.Errorf("err = %v does not say how to build wasmtime in", err)
			}
		})
	}
}
