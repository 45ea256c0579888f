package config

import (
	"bytes"
	"encoding/hex"
	"os"
)

// Secrets configures the secret that every sealed token's key derives from
// (list cursors, input_required requestState; see host/keys), and the
// previous secret during a rotation. Each is given inline or as a file;
// prefer the file or the CORRAL_KEYS_SECRET environment variable to the
// configuration file. All of it is reloadable: a reload reads the files
// again.
type Secrets struct {
	Secret       string `koanf:"secret"`
	SecretFile   string `koanf:"secretFile"`
	Previous     string `koanf:"previous"`
	PreviousFile string `koanf:"previousFile"`

	// The secrets' bytes, resolved by Load (files read, the deprecated
	// catalog.cursorKey applied); nil when not configured.
	current, previous []byte
}

// minSecret is the shortest keys.secret or keys.previous accepted.
const minSecret = 32

// keysKeys are the schema keys of this file.
var keysKeys = []string{"keys.secret", "keys.secretFile", "keys.previous", "keys.previousFile"}

func keysDefaults(m map[string]any) {
	for _, k := range keysKeys {
		m[k] = ""
	}
}

// Bytes returns the current secret and the previous one, nil when not
// configured (the server then uses a random secret of its own).
func (k Secrets) Bytes() (current, previous []byte) { return k.current, k.previous }

// String hides the secrets.
func (k Secrets) String() string {
	return "keys(secret=" + yesNo(k.current != nil) + " previous=" + yesNo(k.previous != nil) + ")"
}

func yesNo(b bool) string {
	if b {
		return "set"
	}
	return "unset"
}

// validateKeys resolves and checks the keys.* values and the deprecated
// catalog.cursorKey, which stands for keys.secret when that is unset.
func validateKeys(cfg *Config, bad func(key, format string, args ...any)) {
	k := &cfg.Keys
	read := func(key, inline, fileKey, file string) []byte {
		switch {
		case inline != "" && file != "":
			bad(key, "set %s or %s, not both", key, fileKey)
			return nil
		case file != "":
			b, err := os.ReadFile(file)
			if err != nil {
				bad(fileKey, "%v", err)
				return nil
			}
			b = bytes.TrimRight(b, "\r\n")
			if len(b) < minSecret {
				bad(fileKey, "the secret in %s must be at least %d bytes, got %d", file, minSecret, len(b))
				return nil
			}
			return b
		case inline != "":
			if len(inline) < minSecret {
				bad(key, "must be at least %d bytes, got %d", minSecret, len(inline))
				return nil
			}
			return []byte(inline)
		}
		return nil
	}
	k.current = read("keys.secret", k.Secret, "keys.secretFile", k.SecretFile)
	k.previous = read("keys.previous", k.Previous, "keys.previousFile", k.PreviousFile)
	if c := cfg.Catalog.CursorKey; c != "" {
		b, err := hex.DecodeString(c)
		switch {
		case err != nil:
			bad("catalog.cursorKey", "must be hex: %v", err)
		case len(b) < 16:
			bad("catalog.cursorKey", "must be at least 16 bytes (32 hex digits), got %d", len(b))
		case k.Secret != "" || k.SecretFile != "":
			bad("catalog.cursorKey", "is a deprecated alias of keys.secret: set only keys.secret")
		default:
			k.current = b
		}
	}
	if k.previous != nil && k.Secret == "" && k.SecretFile == "" && cfg.Catalog.CursorKey == "" {
		bad("keys.previous", "needs a current secret (keys.secret or keys.secretFile)")
	}
}

// Deprecations returns a warning for each deprecated key the configuration
// uses, for the server to log.
func (c *Config) Deprecations() []string {
	var out []string
	if c.Catalog.CursorKey != "" {
		out = append(out, "catalog.cursorKey is deprecated: it serves as keys.secret; set keys.secret or keys.secretFile instead")
	}
	return out
}

// keysEqual reports whether two configurations hold the same secrets.
func keysEqual(a, b Secrets) bool {
	return bytes.Equal(a.current, b.current) && bytes.Equal(a.previous, b.previous) &&
		(a.current == nil) == (b.current == nil) && (a.previous == nil) == (b.previous == nil)
}
