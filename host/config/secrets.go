package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knadh/koanf/v2"
)

// maxSecretFileBytes bounds a config value read from a file.
const maxSecretFileBytes = 64 << 10

// A plugin's config value (plugin.NAME.grants.config.KEY) is a string
// written in the file, or a table naming where the value is, read at
// every load and reload:
//
//	config:
//	  data: issues.json                  # the value itself
//	  token: {env: WEATHER_TOKEN}        # an environment variable of corral's
//	  key: {file: /run/secrets/wx-key}   # a file's content, one final newline dropped
//
// A table can never be mistaken for a string, so no literal value is ever
// read as a reference. A referenced value reaches the plugin as any other;
// it is marked secret (Grants.Secret) and shown only redacted
// (RedactedConfig).

// resolveSecrets replaces each reference table under plugin.*.grants.config
// in fk by the value it names, records where it came from in secrets
// (plugin → key → "env NAME" | "file PATH"), and returns the problems.
func resolveSecrets(fk *koanf.Koanf, dir string, environ []string, o *origins, secrets map[string]map[string]string) []error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	var errs []error
	for _, name := range fk.MapKeys("plugin") {
		base := "plugin." + name + ".grants.config"
		for _, key := range fk.MapKeys(base) {
			full := base + "." + key
			ref, ok := fk.Get(full).(map[string]any)
			if !ok {
				continue
			}
			kinds := slices.Sorted(maps.Keys(ref))
			if len(kinds) != 1 {
				errs = append(errs, o.errorf(full, "a reference names one source, {env: NAME} or {file: PATH}; got %s", strings.Join(kinds, ", ")))
				fk.Delete(full)
				continue
			}
			kind := kinds[0]
			where, _ := ref[kind].(string)
			var value, from string
			switch kind {
			case "env":
				v, set := env[where]
				if where == "" || !set {
					errs = append(errs, o.errorf(full+".env", "environment variable %q is not set: export it before starting corral, or write the value itself", where))
					fk.Delete(full)
					continue
				}
				value, from = v, "env "+where
			case "file":
				if where == "" {
					errs = append(errs, o.errorf(full+".file", "want a file path, got %v", ref[kind]))
					fk.Delete(full)
					continue
				}
				if !filepath.IsAbs(where) {
					where = filepath.Join(dir, where)
				}
				v, err := readSecretFile(where)
				if err != nil {
					errs = append(errs, o.errorf(full+".file", "%v", err))
					fk.Delete(full)
					continue
				}
				value, from = v, "file "+where
			}
			fk.Delete(full)
			_ = fk.Set(full, value)
			if secrets[name] == nil {
				secrets[name] = map[string]string{}
			}
			secrets[name][key] = from
		}
	}
	return errs
}

// readSecretFile reads a config value from path: at most 64 KiB, one
// final newline (or CRLF) dropped, as secret files are usually written.
func readSecretFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSecretFileBytes {
		return "", fmt.Errorf("%s is not a regular file of at most %d bytes", path, maxSecretFileBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// RedactedConfig returns the plugin's config values for display (a
// console, a log line, a trace): each value that came from an environment
// variable or a file replaced by "(from env NAME)" or "(from file PATH)",
// the others as written.
func (g Grants) RedactedConfig() map[string]string {
	if g.Config == nil {
		return nil
	}
	out := make(map[string]string, len(g.Config))
	for k, v := range g.Config {
		out[k] = g.Redact(k, v)
	}
	return out
}

// Redact returns value for display as the plugin's config value key:
// "(from env NAME)" or "(from file PATH)" when it is secret, value itself
// otherwise.
func (g Grants) Redact(key, value string) string {
	if from, ok := g.Secret[key]; ok {
		return "(from " + from + ")"
	}
	return value
}
