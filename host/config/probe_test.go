package config

import (
	"testing"
	"time"
)

func TestProbeSettings(t *testing.T) {
	big := DefaultPlugin()
	big.Limits.Timeout, big.Limits.MemoryPages = 30*time.Second, 1024
	bound := DefaultPlugin()
	bound.Binding = Binding{File: "/plugins/slow.wasm"}
	bound.Limits.Timeout, bound.Engine = 2*time.Second, EngineWasmtime
	small := DefaultPlugin()
	small.Limits.Timeout, small.Limits.MemoryPages = time.Second, 64
	cfg := &Config{Plugin: map[string]Plugin{"big": big, "slow": bound, "small": small}}
	tests := []struct {
		name, path string
		timeout    time.Duration
		pages      uint32
		engine     string
	}{
		{"bound: its own settings", "/plugins/slow.wasm", 2 * time.Second, 256, EngineWasmtime},
		{"unbound: the largest of every entry", "/plugins/other.wasm", 30 * time.Second, 1024, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := cfg.ProbeSettings(cfg.Bindings().BoundName(tt.path, ""))
			if p.Limits.Timeout != tt.timeout || p.Limits.MemoryPages != tt.pages || p.Engine != tt.engine {
				t.Errorf("ProbeSettings = timeout %v, pages %d, engine %q; want %v, %d, %q",
					p.Limits.Timeout, p.Limits.MemoryPages, p.Engine, tt.timeout, tt.pages, tt.engine)
			}
		})
	}
	if p := (&Config{}).ProbeSettings(""); p.Limits != DefaultPlugin().Limits {
		t.Errorf("no entries: %+v, want the defaults", p.Limits)
	}
}
