package config

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblemsSayWhatToDo: each case is one problem a person makes in a
// file, and the exact line corral prints for it: the file and line, the
// key, the value written and the form the key accepts (or the key meant).
func TestProblemsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       string // the whole error, after "FILE:"
	}{
		{"duration", "plugin:\n  files:\n    limits:\n      timeout: soon\n",
			`4: plugin.files.limits.timeout: "soon" is not a duration: write a number with a unit, e.g. 500ms, 30s, 2m or 1h`},
		{"global duration", "plugins:\n  debounce: 5 seconds\n",
			`2: plugins.debounce: "5 seconds" is not a duration: write a number with a unit, e.g. 500ms, 30s, 2m or 1h`},
		{"bool", "plugin:\n  files:\n    grants:\n      log: yess\n",
			`4: plugin.files.grants.log: "yess" is not a boolean: write true or false`},
		{"int", "catalog:\n  pageSize: ten\n",
			`2: catalog.pageSize: "ten" is not a whole number: write digits only, e.g. 64`},
		{"typo by edit distance", "plugins:\n  dirr: x\n",
			`2: plugins.dirr: unknown key (did you mean "plugins.dir"?)`},
		{"typo in a plugin key", "plugin:\n  files:\n    grant:\n      log: true\n",
			`4: plugin.files.grant.log: unknown key (did you mean "plugin.files.grants.log"?)`},
		{"typo in a section", "htp:\n  addr: 127.0.0.1:1\n",
			`2: htp.addr: unknown key (did you mean "http.addr"?)`},
		{"case typo", "plugins:\n  datadir: x\n",
			`2: plugins.datadir: unknown key (did you mean "plugins.dataDir"? keys are case-sensitive)`},
		{"nothing near: the section's keys", "log:\n  colour: red\n",
			`2: log.colour: unknown key (the keys under log are: level, format)`},
		{"grant host with a space", "plugin:\n  w:\n    grants:\n      http:\n        hosts: [\"exa mple.com\"]\n",
			`5: plugin.w.grants.http.hosts: want a host, host:port or *.domain (api.example.com, api.example.com:8443, *.example.com, 203.0.113.7, [2001:db8::1]:443), got "exa mple.com"`},
		{"grant host with a bad port", "plugin:\n  w:\n    grants:\n      http:\n        hosts: [api.example.com:99999]\n",
			`5: plugin.w.grants.http.hosts: want a host, host:port or *.domain (api.example.com, api.example.com:8443, *.example.com, 203.0.113.7, [2001:db8::1]:443), got "api.example.com:99999"`},
		{"grant host as a URL", "plugin:\n  w:\n    grants:\n      http:\n        hosts: [https://api.example.com]\n",
			`5: plugin.w.grants.http.hosts: want a host, host:port or *.domain (api.example.com, api.example.com:8443, *.example.com, 203.0.113.7, [2001:db8::1]:443), got "https://api.example.com"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, "c"+string(rune('a'+i))+".yaml", tt.body)
			_, err := Load(Source{File: file, Environ: []string{}})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got, want := err.Error(), file+":"+tt.want; !strings.Contains(got, want) {
				t.Errorf("error\n  %s\nwant\n  %s", got, want)
			}
		})
	}
}

// TestEveryProblemAtOnce: a file with an unknown key, two values of the
// wrong type and three out-of-range values (one in the plugin entry whose
// other value failed to decode) reports all six, in line order.
func TestEveryProblemAtOnce(t *testing.T) {
	body := `log:
  level: loud
plugins:
  dirr: ./plugins
plugin:
  files:
    limits:
      timeout: soon
      instances: 0
    grants:
      log: yess
      http:
        hosts: ["exa mple.com"]
`
	file := writeFile(t, t.TempDir(), "all.yaml", body)
	_, err := Load(Source{File: file, Environ: []string{}})
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("error %v is not a list", err)
	}
	var got []string
	for _, e := range joined.Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *config.Error", e)
		}
		got = append(got, ce.Key)
	}
	want := []string{"log.level", "plugins.dirr", "plugin.files.limits.timeout", "plugin.files.limits.instances",
		"plugin.files.grants.log", "plugin.files.grants.http.hosts"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems for %q, want %q (in line order):\n%v", got, want, err)
	}
}

// TestGrantHost: the HTTP grant forms the plugin runtime matches.
func TestGrantHost(t *testing.T) {
	for h, ok := range map[string]bool{
		"api.example.com": true, "api.example.com:8443": true, "*.example.com": true, "localhost": true,
		"203.0.113.7": true, "203.0.113.7:80": true, "2001:db8::1": true, "[2001:db8::1]:443": true,
		"": false, "exa mple.com": false, "https://api.example.com": false, "api.example.com:0": false,
		"api.example.com:99999": false, "api.example.com:http": false, "user@host": false, "a/b": false,
		"[2001:db8::1]": false, "-bad.example": false, "*.": false,
	} {
		if got := grantHost(h); got != ok {
			t.Errorf("grantHost(%q) = %v, want %v", h, got, ok)
		}
	}
}

// TestMachineProblems: what a valid file needs of this machine, each with
// the line that set it and what to do.
func TestMachineProblems(t *testing.T) {
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	if err := os.Mkdir(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       []string // one substring per problem, in order; none for a clean file
	}{
		{"clean", "plugins:\n  dir: plugins\nhttp:\n  addr: " + freeAddr + "\n", nil},
		{"missing plugin directory", "plugins:\n  dir: nowhere\n",
			[]string{":2: plugins.dir: " + filepath.Join(dir, "nowhere") + " does not exist: create it (mkdir -p "}},
		{"missing plugin file", "plugins:\n  dir: plugins\nplugin:\n  x:\n    file: plugins/x.wasm\n",
			[]string{":5: plugin.x.file: " + filepath.Join(dir, "plugins", "x.wasm") + " is not a file: build the plugin there, fix the path, or set plugin.x.enabled: false"}},
		{"disabled plugin's file may be missing", "plugins:\n  dir: plugins\nplugin:\n  x:\n    file: plugins/x.wasm\n    enabled: false\n", nil},
		{"port in use", "http:\n  addr: " + taken.Addr().String() + "\n",
			[]string{":2: http.addr: " + taken.Addr().String() + " is in use (another corral, or `make run`?): stop it or choose another port"}},
		{"two listeners on one port", "http:\n  addr: " + freeAddr + "\nadmin:\n  addr: " + freeAddr + "\n",
			[]string{":4: admin.addr: " + freeAddr + " is also http.addr: give each listener its own port"}},
		{"address of no interface", "ws:\n  addr: 192.0.2.1:7337\n",
			[]string{":2: ws.addr: 192.0.2.1:7337: no interface of this machine has that address"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, dir, "m"+string(rune('a'+i))+".yaml", tt.body)
			cfg, err := Load(Source{File: file, Environ: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			errs := cfg.MachineProblems()
			if len(errs) != len(tt.want) {
				t.Fatalf("problems %v, want %d", errs, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), file+w) {
					t.Errorf("problem\n  %v\nwant\n  %s%s", errs[i], file, w)
				}
			}
		})
	}
}
