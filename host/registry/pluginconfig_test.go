package registry

import (
	"testing"
	"time"

	"github.com/corral-mcp/corral/host/config"
)

func TestPluginConfigIdleTimeout(t *testing.T) {
	tests := []struct {
		name string
		in   time.Duration
		want time.Duration
	}{
		{"default", config.DefaultPlugin().Limits.IdleTimeout, time.Minute},
		{"set", 90 * time.Second, 90 * time.Second},
		{"zero keeps every instance", 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := config.DefaultPlugin()
			s.Limits.IdleTimeout = tt.in
			if got := PluginConfig("x.wasm", "x", s).IdleTimeout; got != tt.want {
				t.Errorf("IdleTimeout = %v, want %v", got, tt.want)
			}
		})
	}
}
