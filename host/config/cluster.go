package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Cluster configures the replicas of one corral cluster, which share
// events, kv stores and plugins through NATS (docs/cluster.md). Without
// NATS URLs corral is one process and none of it applies.
type Cluster struct {
	// NATS are the URLs of the NATS servers (nats://host:4222, tls://...);
	// empty: no cluster.
	NATS []string `koanf:"nats"`
	// Name prefixes every subject and bucket of the cluster, so that two
	// clusters can share one NATS.
	Name string `koanf:"name"`
	// Replica is this replica's id, unique in the cluster; "" derives one
	// from the host name and the process id (Replica after Load).
	Replica string `koanf:"replica"`
	// CredsFile, User with Password, and Token are the three ways to
	// authenticate to NATS; at most one is set.
	CredsFile string `koanf:"credsFile"`
	User      string `koanf:"user"`
	Password  string `koanf:"password"`
	Token     string `koanf:"token"`
	TLS       TLS    `koanf:"tls"`
	// Plugins takes the plugins from the cluster's plugin bucket (a NATS
	// Object Store, "<name>-plugins") instead of a directory: one source,
	// so plugins.dir must be unset.
	Plugins bool `koanf:"plugins"`
}

// TLS configures a TLS client: the CA that signs the servers (empty: the
// system roots) and, for mutual TLS, this client's certificate and key.
type TLS struct {
	CA   string `koanf:"ca"`
	Cert string `koanf:"cert"`
	Key  string `koanf:"key"`
}

// Enabled reports whether this replica is part of a cluster.
func (c Cluster) Enabled() bool { return len(c.NATS) > 0 }

// String hides the credentials.
func (c Cluster) String() string {
	if !c.Enabled() {
		return "cluster(off)"
	}
	return fmt.Sprintf("cluster(name=%s replica=%s servers=%d)", c.Name, c.Replica, len(c.NATS))
}

// clusterKeys are the schema keys of this file.
var clusterKeys = []string{
	"cluster.nats", "cluster.name", "cluster.replica",
	"cluster.credsFile", "cluster.user", "cluster.password", "cluster.token",
	"cluster.tls.ca", "cluster.tls.cert", "cluster.tls.key", "cluster.plugins",
}

// DefaultClusterName is cluster.name's default.
const DefaultClusterName = "corral"

func clusterDefaults(m map[string]any) {
	for _, k := range clusterKeys {
		m[k] = ""
	}
	delete(m, "cluster.nats")
	m["cluster.name"] = DefaultClusterName
	m["cluster.plugins"] = false
}

// clusterToken is the syntax of cluster.name and cluster.replica: one NATS
// subject token that is also valid in a JetStream bucket name.
var clusterToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validateCluster checks the cluster.* values and fills the default
// replica id. A cluster needs the shared secret: every replica must open
// the cursors, state and session tokens the others seal.
func validateCluster(cfg *Config, bad func(key, format string, args ...any)) {
	c := &cfg.Cluster
	if !clusterToken.MatchString(c.Name) {
		bad("cluster.name", "want 1 to 64 letters, digits, '-' or '_', got %q", c.Name)
	}
	if c.Replica != "" && !clusterToken.MatchString(c.Replica) {
		bad("cluster.replica", "want 1 to 64 letters, digits, '-' or '_', got %q", c.Replica)
	}
	if !c.Enabled() {
		if c.Plugins {
			bad("cluster.plugins", "needs cluster.nats: the plugin bucket is the cluster's")
		}
		return
	}
	if c.Plugins && cfg.Plugins.Dir != "" {
		bad("cluster.plugins", "a replica takes its plugins from one source: unset plugins.dir (%s) or cluster.plugins", cfg.Plugins.Dir)
	}
	if c.Replica == "" {
		c.Replica = defaultReplica()
	}
	for _, s := range c.NATS {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("cluster.nats", "want a server URL like nats://127.0.0.1:4222, got %q", s)
			continue
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			bad("cluster.nats", "want a nats://, tls://, ws:// or wss:// URL, got %q", s)
		}
		if u.User != nil {
			bad("cluster.nats", "put credentials in cluster.user and cluster.password (or cluster.token, cluster.credsFile), not in the URL %s", u.Redacted())
		}
	}
	n := 0
	for _, set := range []bool{c.CredsFile != "", c.User != "" || c.Password != "", c.Token != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		bad("cluster", "set one of cluster.credsFile, cluster.user with cluster.password, or cluster.token")
	}
	if (c.User == "") != (c.Password == "") {
		bad("cluster.user", "cluster.user and cluster.password go together")
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		bad("cluster.tls.cert", "cluster.tls.cert and cluster.tls.key go together")
	}
	for key, path := range map[string]string{"cluster.credsFile": c.CredsFile, "cluster.tls.ca": c.TLS.CA, "cluster.tls.cert": c.TLS.Cert, "cluster.tls.key": c.TLS.Key} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			bad(key, "%v", err)
		}
	}
	if cfg.Keys.current == nil {
		bad("cluster.nats", "a cluster needs the shared secret: set keys.secret or keys.secretFile (env CORRAL_KEYS_SECRET), the same on every replica, so that each opens the cursors, requestState and session tokens the others seal")
	}
}

// defaultReplica is the replica id of a process that names none: its host
// name and process id, reduced to the id's syntax.
func defaultReplica() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "corral"
	}
	host = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, host)
	id := host + "-" + strconv.Itoa(os.Getpid())
	if len(id) > 64 {
		id = id[len(id)-64:]
	}
	return id
}
