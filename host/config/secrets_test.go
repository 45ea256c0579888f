package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigReferences: a plugin config value written as {env: NAME} or
// {file: PATH} is read from there, marked secret and redacted for
// display; a string that merely looks like a reference stays a string;
// a reference that cannot be read is a problem naming it.
func TestConfigReferences(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.txt"), []byte("k3y-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"WX_TOKEN=t0ken-from-env"}
	tests := []struct {
		name, config string
		value        string // plugin.wx's config value "v"
		shown        string // what Redact shows
		secret       string // Grants.Secret["v"]
		err          string
	}{
		{"literal", `v: issues.json`, "issues.json", "issues.json", "", ""},
		{"literal that looks like a reference", `v: "env:WX_TOKEN"`, "env:WX_TOKEN", "env:WX_TOKEN", "", ""},
		{"env", `v: {env: WX_TOKEN}`, "t0ken-from-env", "(from env WX_TOKEN)", "env WX_TOKEN", ""},
		{"file, relative to the config file", `v: {file: key.txt}`, "k3y-from-file", "(from file " + filepath.Join(dir, "key.txt") + ")", "file " + filepath.Join(dir, "key.txt"), ""},
		{"env unset", `v: {env: NOPE}`, "", "", "", `plugin.wx.grants.config.v.env: environment variable "NOPE" is not set: export it before starting corral, or write the value itself`},
		{"file missing", `v: {file: gone.txt}`, "", "", "", "plugin.wx.grants.config.v.file: cannot read " + filepath.Join(dir, "gone.txt")},
		{"two sources", `v: {env: WX_TOKEN, file: key.txt}`, "", "", "", "plugin.wx.grants.config.v: a reference names one source, {env: NAME} or {file: PATH}; got env, file"},
		{"unknown source", `v: {vault: x}`, "", "", "", `plugin.wx.grants.config.v.vault: unknown key`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, "s"+string(rune('a'+i))+".yaml", "plugin:\n  wx:\n    grants:\n      config:\n        "+tt.config+"\n")
			cfg, err := Load(Source{File: file, Environ: environ})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := cfg.PluginSettings("wx").Grants
			if g.Config["v"] != tt.value || g.Secret["v"] != tt.secret {
				t.Errorf("value %q secret %q, want %q %q", g.Config["v"], g.Secret["v"], tt.value, tt.secret)
			}
			if diff := cmp.Diff(map[string]string{"v": tt.shown}, g.RedactedConfig()); diff != "" {
				t.Errorf("RedactedConfig (-want +got)\n%s", diff)
			}
		})
	}
}

// TestConfigReferenceReread: a reload reads the referenced file again (a
// rotated secret).
func TestConfigReferenceReread(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("one"), 0o600)
	file := writeFile(t, dir, "c.yaml", "plugin:\n  wx:\n    grants:\n      config:\n        v: {file: key}\n")
	for _, want := range []string{"one", "two"} {
		os.WriteFile(key, []byte(want), 0o600)
		cfg, err := Load(Source{File: file, Environ: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.PluginSettings("wx").Grants.Config["v"]; got != want {
			t.Errorf("value %q, want %q", got, want)
		}
	}
}
