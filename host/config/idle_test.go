package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestIdleTimeout(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       time.Duration
		wantErr    string // substring; "" for none
	}{
		{"default", "plugin:\n  x:\n    limits:\n      instances: 2\n", time.Minute, ""},
		{"set", "plugin:\n  x:\n    limits:\n      idleTimeout: 90s\n", 90 * time.Second, ""},
		{"zero never closes", "plugin:\n  x:\n    limits:\n      idleTimeout: 0s\n", 0, ""},
		{"negative", "log:\n  level: info\nplugin:\n  x:\n    limits:\n      idleTimeout: -1s\n", 0,
			"c.yaml:6: plugin.x.limits.idleTimeout: must be between 0 (never close idle instances) and 24h, got -1s"},
		{"too long", "plugin:\n  x:\n    limits:\n      idleTimeout: 25h\n", 0,
			"c.yaml:4: plugin.x.limits.idleTimeout: must be between 0"},
		{"not a duration", "plugin:\n  x:\n    limits:\n      idleTimeout: soon\n", 0, "c.yaml:4: plugin.x.limits.idleTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			if got := cfg.PluginSettings("x").Limits.IdleTimeout; got != tt.want {
				t.Errorf("idleTimeout = %v, want %v", got, tt.want)
			}
		})
	}
	if got := DefaultPlugin().Limits.IdleTimeout; got != time.Minute {
		t.Errorf("default idleTimeout = %v, want 1m", got)
	}
}

func TestSleepAfter(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       time.Duration
		wantErr    string // substring; "" for none
	}{
		{"default", "plugin:\n  x:\n    limits:\n      instances: 2\n", 5 * time.Minute, ""},
		{"set", "plugin:\n  x:\n    limits:\n      sleepAfter: 90s\n", 90 * time.Second, ""},
		{"zero keeps it hot", "plugin:\n  x:\n    limits:\n      sleepAfter: 0s\n", 0, ""},
		{"negative", "plugin:\n  x:\n    limits:\n      sleepAfter: -1s\n", 0,
			"c.yaml:4: plugin.x.limits.sleepAfter: must be between 0 (never sleep) and 24h, got -1s"},
		{"too long", "plugin:\n  x:\n    limits:\n      sleepAfter: 25h\n", 0, "plugin.x.limits.sleepAfter: must be between 0"},
		{"not a duration", "plugin:\n  x:\n    limits:\n      sleepAfter: soon\n", 0, "c.yaml:4: plugin.x.limits.sleepAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			if got := cfg.PluginSettings("x").Limits.SleepAfter; got != tt.want {
				t.Errorf("sleepAfter = %v, want %v", got, tt.want)
			}
		})
	}
	if got := DefaultPlugin().Limits.SleepAfter; got != 5*time.Minute {
		t.Errorf("default sleepAfter = %v, want 5m", got)
	}
}
