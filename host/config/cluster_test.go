package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestCluster(t *testing.T) {
	dir := t.TempDir()
	secret := "keys:\n  secret: " + strings.Repeat("s", 32) + "\n"
	writeFile(t, dir, "ca.pem", "ca")
	writeFile(t, dir, "creds", "creds")
	tests := []struct {
		name string
		yaml string
		env  []string
		want Cluster // checked when err is ""; Replica "*" means the default
		err  string
	}{
		{"off", "", nil, Cluster{Name: "corral"}, ""},
		{"env, several servers", secret, []string{"CORRAL_CLUSTER_NATS=nats://a:4222, nats://b:4222", "CORRAL_CLUSTER_REPLICA=r1"},
			Cluster{NATS: []string{"nats://a:4222", "nats://b:4222"}, Name: "corral", Replica: "r1"}, ""},
		{"default replica", secret + "cluster:\n  nats: nats://127.0.0.1:4222\n  name: prod\n", nil,
			Cluster{NATS: []string{"nats://127.0.0.1:4222"}, Name: "prod", Replica: "*"}, ""},
		{"files relative to the config", secret + "cluster:\n  nats: [tls://n:4222]\n  credsFile: creds\n  tls:\n    ca: ca.pem\n", nil,
			Cluster{NATS: []string{"tls://n:4222"}, Name: "corral", Replica: "*", CredsFile: dir + "/creds", TLS: TLS{CA: dir + "/ca.pem"}}, ""},
		{"user and password", secret + "cluster:\n  nats: nats://n:4222\n  user: u\n  password: hunter2\n", nil,
			Cluster{NATS: []string{"nats://n:4222"}, Name: "corral", Replica: "*", User: "u", Password: "hunter2"}, ""},
		{"no secret", "cluster:\n  nats: nats://n:4222\n", nil, Cluster{},
			"cluster.nats: a cluster needs the shared secret: set keys.secret or keys.secretFile (env CORRAL_KEYS_SECRET)"},
		{"no secret, env", "", []string{"CORRAL_CLUSTER_NATS=nats://n:4222"}, Cluster{}, "env CORRAL_CLUSTER_NATS: cluster.nats: a cluster needs the shared secret"},
		{"bad scheme", secret + "cluster:\n  nats: http://n:4222\n", nil, Cluster{}, `want a nats://, tls://, ws:// or wss:// URL, got "http://n:4222"`},
		{"not a URL", secret + "cluster:\n  nats: n:4222\n", nil, Cluster{}, `cluster.nats: want a server URL like nats://127.0.0.1:4222`},
		{"credentials in the URL", secret + "cluster:\n  nats: nats://u:hunter2@n:4222\n", nil, Cluster{}, "not in the URL nats://u:xxxxx@n:4222"},
		{"two auth methods", secret + "cluster:\n  nats: nats://n:4222\n  token: t\n  user: u\n  password: p\n", nil, Cluster{}, "set one of cluster.credsFile"},
		{"user alone", secret + "cluster:\n  nats: nats://n:4222\n  user: u\n", nil, Cluster{}, "cluster.user and cluster.password go together"},
		{"cert alone", secret + "cluster:\n  nats: nats://n:4222\n  tls:\n    cert: ca.pem\n", nil, Cluster{}, "cluster.tls.cert and cluster.tls.key go together"},
		{"missing CA", secret + "cluster:\n  nats: nats://n:4222\n  tls:\n    ca: nowhere.pem\n", nil, Cluster{}, "cluster.tls.ca: stat"},
		{"plugins from the bucket", secret + "cluster:\n  nats: nats://n:4222\n  replica: r\n  plugins: true\n", nil,
			Cluster{NATS: []string{"nats://n:4222"}, Name: "corral", Replica: "r", Plugins: true}, ""},
		{"bucket and directory", secret + "plugins:\n  dir: /srv/plugins\ncluster:\n  nats: nats://n:4222\n  plugins: true\n", nil, Cluster{},
			"cluster.plugins: a replica takes its plugins from one source: unset plugins.dir (/srv/plugins) or cluster.plugins"},
		{"bucket without a cluster", "cluster:\n  plugins: true\n", nil, Cluster{}, "cluster.plugins: needs cluster.nats"},
		{"bad name", "cluster:\n  name: a.b\n", nil, Cluster{}, `cluster.name: want 1 to 64 letters, digits, '-' or '_', got "a.b"`},
		{"bad replica", secret + "cluster:\n  nats: nats://n:4222\n  replica: 'r 1'\n", nil, Cluster{}, `cluster.replica: want`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, fmt.Sprintf("c%d.yaml", i), tt.yaml)
			cfg, err := Load(Source{File: file, Environ: tt.env})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error prints the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Cluster
			if tt.want.Replica == "*" {
				if want := defaultReplica(); got.Replica != want || !strings.HasSuffix(want, fmt.Sprintf("-%d", os.Getpid())) {
					t.Errorf("replica %q, want %q ending in the pid", got.Replica, want)
				}
				tt.want.Replica = got.Replica
			}
			if fmt.Sprint(got.NATS) != fmt.Sprint(tt.want.NATS) || got.Name != tt.want.Name || got.Replica != tt.want.Replica ||
				got.CredsFile != tt.want.CredsFile || got.User != tt.want.User || got.Password != tt.want.Password ||
				got.Token != tt.want.Token || got.TLS != tt.want.TLS || got.Plugins != tt.want.Plugins {
				t.Errorf("cluster %+v, want %+v", got, tt.want)
			}
			if s := fmt.Sprint(got); strings.Contains(s, "hunter2") {
				t.Errorf("the credentials print: %s", s)
			}
		})
	}
}
