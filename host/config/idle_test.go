package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLimitDurations: limits.idleTimeout and limits.sleepAfter of a plugin
// entry, from their defaults, set, 0, and refused (with file, line and
// key) out of range or unparsable.
func TestLimitDurations(t *testing.T) {
	dir := t.TempDir()
	for _, key := range []struct {
		name string
		get  func(Limits) time.Duration
		def  time.Duration
		zero string // what 0 means, in the range error
	}{
		{"idleTimeout", func(l Limits) time.Duration { return l.IdleTimeout }, time.Minute, "never close idle instances"},
		{"sleepAfter", func(l Limits) time.Duration { return l.SleepAfter }, 5 * time.Minute, "never sleep"},
	} {
		entry := func(value string) string {
			return fmt.Sprintf("plugin:\n  x:\n    limits:\n      %s: %s\n", key.name, value)
		}
		tests := []struct {
			name, body string
			want       time.Duration
			wantErr    string // substring; "" for none
		}{
			{"default", "plugin:\n  x:\n    limits:\n      instances: 2\n", key.def, ""},
			{"set", entry("90s"), 90 * time.Second, ""},
			{"zero", entry("0s"), 0, ""},
			{"negative", "log:\n  level: info\n" + entry("-1s"), 0,
				fmt.Sprintf("c.yaml:6: plugin.x.limits.%s: must be between 0 (%s) and 24h, got -1s", key.name, key.zero)},
			{"too long", entry("25h"), 0, fmt.Sprintf("c.yaml:4: plugin.x.limits.%s: must be between 0", key.name)},
			{"not a duration", entry("soon"), 0, "c.yaml:4: plugin.x.limits." + key.name},
		}
		for _, tt := range tests {
			t.Run(key.name+"/"+tt.name, func(t *testing.T) {
				cfg, err := Load(Source{File: writeFile(t, dir, "c.yaml", tt.body), Environ: []string{}})
				if tt.wantErr != "" {
					var ce *Error
					if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want a *config.Error containing %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := key.get(cfg.PluginSettings("x").Limits); got != tt.want {
					t.Errorf("%s = %v, want %v", key.name, got, tt.want)
				}
			})
		}
		if got := key.get(DefaultPlugin().Limits); got != key.def {
			t.Errorf("default %s = %v, want %v", key.name, got, key.def)
		}
	}
}
