package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFleetLimits: plugins.limits sets every plugin's limits at once; an
// entry's own key wins, key by key; a plugin with no entry takes them too;
// the environment sets them like the file.
func TestFleetLimits(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		body    string
		environ []string
		want    map[string]Limits // plugin → limits (no entry: "unlisted")
	}{
		{
			name: "file",
			body: `
plugins:
  limits:
    sleepAfter: 30s
    instances: 2
plugin:
  a:
    enabled: true
  b:
    limits:
      sleepAfter: 0s
  c:
    grants:
      log: true
`,
			want: map[string]Limits{
				"a":        with(func(l *Limits) { l.SleepAfter, l.Instances = 30*time.Second, 2 }),
				"b":        with(func(l *Limits) { l.SleepAfter, l.Instances = 0, 2 }),
				"c":        with(func(l *Limits) { l.SleepAfter, l.Instances = 30*time.Second, 2 }),
				"unlisted": with(func(l *Limits) { l.SleepAfter, l.Instances = 30*time.Second, 2 }),
			},
		},
		{
			name:    "environment",
			body:    "plugin:\n  a:\n    limits:\n      timeout: 2s\n",
			environ: []string{"CORRAL_PLUGINS_LIMITS_SLEEP_AFTER=10s", "CORRAL_PLUGINS_LIMITS_TIMEOUT=3s"},
			want: map[string]Limits{
				"a":        with(func(l *Limits) { l.SleepAfter, l.Timeout = 10*time.Second, 2*time.Second }),
				"unlisted": with(func(l *Limits) { l.SleepAfter, l.Timeout = 10*time.Second, 3*time.Second }),
			},
		},
		{
			name: "none",
			body: "plugin:\n  a:\n    limits:\n      timeout: 2s\n",
			want: map[string]Limits{
				"a":        with(func(l *Limits) { l.Timeout = 2 * time.Second }),
				"unlisted": defaultLimits,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := tt.environ
			if environ == nil {
				environ = []string{}
			}
			cfg, err := Load(Source{File: writeFile(t, dir, "c.yaml", tt.body), Environ: environ})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				if diff := cmp.Diff(want, cfg.PluginSettings(name).Limits); diff != "" {
					t.Errorf("%s (-want +got)\n%s", name, diff)
				}
			}
			if got := cfg.PluginSettings("a"); !got.Enabled || got.Grants.KVQuota != defaultKVQuota {
				t.Errorf("entry a lost its other defaults: %+v", got)
			}
			// The probe of an unbound file runs under the fleet's limits
			// (the largest timeout and memory of any entry on top).
			if got, want := cfg.ProbeSettings("").Limits.SleepAfter, tt.want["unlisted"].SleepAfter; got != want {
				t.Errorf("probe sleepAfter = %v, want %v", got, want)
			}
		})
	}
}

func with(f func(*Limits)) Limits {
	l := defaultLimits
	f(&l)
	return l
}

// TestFleetLimitsErrors: a bad plugins.limits value is reported once, at
// its own key (file and line), not again for each entry that takes it; an
// entry's own bad value is reported at the entry.
func TestFleetLimitsErrors(t *testing.T) {
	dir := t.TempDir()
	entries := "plugin:\n  a:\n    enabled: true\n  b:\n    grants:\n      log: true\n  c:\n    limits:\n      instances: 1\n"
	tests := []struct {
		name string
		body string
		want []string // the messages, in order
	}{
		{"out of bounds", "plugins:\n  limits:\n    sleepAfter: 25h\n" + entries,
			[]string{"c.yaml:3: plugins.limits.sleepAfter: must be between 0 (never sleep) and 24h, got 25h0m0s"}},
		{"not a duration", "plugins:\n  limits:\n    timeout: soon\n" + entries,
			[]string{`c.yaml:3: plugins.limits.timeout: "soon" is not a duration`}},
		{"wrong type", "plugins:\n  limits:\n    instances: many\n" + entries,
			[]string{`c.yaml:3: plugins.limits.instances: `}},
		{"entry's own", "plugins:\n  limits:\n    sleepAfter: 25h\n" + entries + "      sleepAfter: -1s\n",
			[]string{
				"c.yaml:3: plugins.limits.sleepAfter: must be between 0",
				"c.yaml:13: plugin.c.limits.sleepAfter: must be between 0 (never sleep) and 24h, got -1s",
			}},
		{"from the environment", entries, []string{"env CORRAL_PLUGINS_LIMITS_INSTANCES: plugins.limits.instances: must be between 1 and 256, got 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := []string{}
			if tt.name == "from the environment" {
				environ = []string{"CORRAL_PLUGINS_LIMITS_INSTANCES=0"}
			}
			_, err := Load(Source{File: writeFile(t, dir, "c.yaml", tt.body), Environ: environ})
			if err == nil {
				t.Fatal("loaded")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *config.Error", err)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%s", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestFleetLimitsReload: a change of plugins.limits alone is applied by a
// reload (it changes every plugin's settings), not left for a restart.
func TestFleetLimitsReload(t *testing.T) {
	dir := t.TempDir()
	old, err := Load(Source{File: writeFile(t, dir, "c.yaml", "plugin:\n  a:\n    enabled: true\n"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	next, err := Load(Source{File: writeFile(t, dir, "c.yaml", "plugins:\n  limits:\n    sleepAfter: 1s\nplugin:\n  a:\n    enabled: true\n"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if keys := RestartKeys(old, next); len(keys) != 0 {
		t.Errorf("RestartKeys = %v, want none", keys)
	}
	if diff := cmp.Diff([]string{"plugins.limits", "plugin.a"}, ReloadKeys(old, next)); diff != "" {
		t.Errorf("ReloadKeys (-want +got)\n%s", diff)
	}
	applied := applyReloadable(old, next)
	if got := applied.PluginSettings("unlisted").Limits.SleepAfter; got != time.Second {
		t.Errorf("after the reload an unlisted plugin sleeps after %v, want 1s", got)
	}
}
