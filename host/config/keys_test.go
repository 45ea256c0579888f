package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("s", 32)
	prev := strings.Repeat("p", 40)
	writeFile(t, dir, "secret", secret+"\n")
	writeFile(t, dir, "short", "too short\n")
	hexKey := strings.Repeat("ab", 16)
	tests := []struct {
		name       string
		yaml       string
		env        []string
		cur, prev  string // "" unset
		err        string // "" valid
		deprecated bool
	}{
		{"none", "", nil, "", "", "", false},
		{"inline", "keys:\n  secret: " + secret + "\n", nil, secret, "", "", false},
		{"env", "", []string{"CORRAL_KEYS_SECRET=" + secret, "CORRAL_KEYS_PREVIOUS=" + prev}, secret, prev, "", false},
		{"file, relative to the config, newline trimmed", "keys:\n  secretFile: secret\n  previous: " + prev + "\n", nil, secret, prev, "", false},
		{"short", "keys:\n  secret: abc\n", nil, "", "", "keys.secret: must be at least 32 bytes, got 3", false},
		{"short file", "keys:\n  secretFile: short\n", nil, "", "", "keys.secretFile: the secret in", false},
		{"missing file", "keys:\n  secretFile: nowhere\n", nil, "", "", "keys.secretFile: open", false},
		{"both", "keys:\n  secret: " + secret + "\n  secretFile: secret\n", nil, "", "", "set keys.secret or keys.secretFile, not both", false},
		{"previous alone", "keys:\n  previous: " + prev + "\n", nil, "", "", "keys.previous: needs a current secret", false},
		{"cursorKey alias", "catalog:\n  cursorKey: " + hexKey + "\n", nil, strings.Repeat("\xab", 16), "", "", true},
		{"cursorKey and secret", "catalog:\n  cursorKey: " + hexKey + "\nkeys:\n  secret: " + secret + "\n", nil, "", "", "catalog.cursorKey: is a deprecated alias of keys.secret", true},
		{"cursorKey not hex", "catalog:\n  cursorKey: zz\n", nil, "", "", "catalog.cursorKey: must be hex", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, fmt.Sprintf("c%d.yaml", i), tt.yaml)
			cfg, err := Load(Source{File: file, Environ: tt.env})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cur, pr := cfg.Keys.Bytes()
			if string(cur) != tt.cur || string(pr) != tt.prev || (cur == nil) != (tt.cur == "") || (pr == nil) != (tt.prev == "") {
				t.Errorf("secrets %q, %q; want %q, %q", cur, pr, tt.cur, tt.prev)
			}
			if got := len(cfg.Deprecations()) > 0; got != tt.deprecated {
				t.Errorf("deprecations %q, want some: %v", cfg.Deprecations(), tt.deprecated)
			}
			if s := fmt.Sprint(cfg.Keys); strings.Contains(s, secret) || strings.Contains(s, prev) {
				t.Errorf("the secrets print: %s", s)
			}
		})
	}
}

// TestKeysReload: a changed secret, even one only in its file, is a
// reloadable change; the configuration in force gets it.
func TestKeysReload(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "corral.yaml", "keys:\n  secretFile: secret\n")
	writeFile(t, dir, "secret", strings.Repeat("a", 32))
	src := Source{File: file, Environ: []string{}}
	cfg, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var applied *Config
	w := NewWatcher(src, cfg, WatchOptions{OnReload: func(_, n *Config) { applied = n }})
	writeFile(t, dir, "secret", strings.Repeat("b", 32))
	writeFile(t, dir, "corral.yaml", "keys:\n  secretFile: secret\n  previous: "+strings.Repeat("a", 32)+"\n")
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if applied == nil {
		t.Fatal("no reload applied")
	}
	if cur, prev := applied.Keys.Bytes(); string(cur) != strings.Repeat("b", 32) || string(prev) != strings.Repeat("a", 32) {
		t.Errorf("in force after reload: %q, %q", cur, prev)
	}
	if keys := ReloadKeys(cfg, applied); len(keys) != 1 || keys[0] != "keys" {
		t.Errorf("ReloadKeys = %v, want [keys]", keys)
	}
	if keys := RestartKeys(cfg, applied); len(keys) != 0 {
		t.Errorf("RestartKeys = %v, want none", keys)
	}
}
