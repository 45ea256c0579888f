package config

import (
	"os"
	"path/filepath"
	"strings"
)

// OCI configures how plugins are pulled from OCI registries.
type OCI struct {
	// DockerConfig is a docker config.json whose credentials are used by
	// registry host; "" uses $DOCKER_CONFIG/config.json or
	// ~/.docker/config.json when one exists.
	DockerConfig string `koanf:"dockerConfig"`
	// Username and Password, when set, are used for every registry in place
	// of DockerConfig. Password is a secret: give it by environment.
	Username string `koanf:"username"`
	Password string `koanf:"password"`
	// PlainHTTP lists the registries (host[:port]) spoken to without TLS;
	// loopback registries always are.
	PlainHTTP []string `koanf:"plainHttp"`
}

// HasSources reports whether c names a lock or a plugin source.
func (c *Config) HasSources() bool {
	if c.Plugins.Lock != "" {
		return true
	}
	for _, p := range c.Plugin {
		if p.Source != "" {
			return true
		}
	}
	return false
}

// defaultStoreDir is where pulled plugins are kept when the operator sets
// no plugins.store: corral/plugins under the user's data directory
// ($XDG_DATA_HOME, else ~/.local/share). It outlives the compilation cache
// and is not plugins.dataDir (which defaults to memory).
func defaultStoreDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "corral", "plugins")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "share", "corral", "plugins")
}

// defaultDockerConfig is the docker config.json docker itself would read,
// "" when there is none.
func defaultDockerConfig() string {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".docker")
	}
	f := filepath.Join(dir, "config.json")
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// sourceKeys are the keys of plugin sources and locks.
var sourceKeys = []string{
	"plugins.store", "plugins.lock",
	"plugins.oci.dockerConfig", "plugins.oci.username", "plugins.oci.password", "plugins.oci.plainHttp",
	"plugin.*.source", "plugin.*.followTag", "plugin.*.signer",
}

func init() {
	schema = append(schema, sourceKeys...)
	listKeys["plugins.oci.plainHttp"] = true
}

// validateSource checks the syntax of plugin.<name>.source.
func validateSource(pre string, p Plugin, bad func(key, format string, args ...any)) {
	if p.Source == "" {
		if p.FollowTag {
			bad(pre+"followTag", "needs a source to follow")
		}
		return
	}
	rest, ok := strings.CutPrefix(p.Source, "oci://")
	slash := strings.Index(rest, "/")
	switch {
	case !ok:
		bad(pre+"source", "want oci://REGISTRY/REPO@sha256:DIGEST or oci://REGISTRY/REPO:TAG, got %q", p.Source)
	case slash < 1 || !strings.ContainsAny(rest[slash:], ":@"):
		bad(pre+"source", "%q names no tag or digest (add :TAG or @sha256:DIGEST)", p.Source)
	case p.File != "":
		bad(pre+"file", "a plugin comes from its file or its source, not both")
	case p.FollowTag && strings.Contains(rest, "@"):
		bad(pre+"followTag", "the source is pinned by digest: there is no tag to follow")
	}
}
