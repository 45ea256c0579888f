package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestNewRefusesBadArguments(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no name", []string{"--lang", "go"}, exitUsage, "want NAME and an optional DIR"},
		{"too many", []string{"a", "b", "c", "--lang", "go"}, exitUsage, "want NAME and an optional DIR"},
		{"no language", []string{"hello"}, exitUsage, "--lang is required (assemblyscript, c, go, rust)"},
		{"unknown language", []string{"hello", "--lang", "zig"}, exitUsage, `unknown language "zig"`},
		{"uppercase", []string{"Hello", "--lang", "go"}, exitUsage, `plugin name "Hello" must match`},
		{"leading digit", []string{"1st", "--lang", "go"}, exitUsage, `plugin name "1st" must match`},
		{"underscore, not a scheme", []string{"a_b", "--lang", "go"}, exitUsage, `plugin name "a_b" must match`},
		{"directory not empty", []string{"hello", "--lang", "c", full}, exitFail, full + " exists and is not empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", append([]string{"plugin", "new"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// readTree returns the files under dir by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNewWritesSelfContainedProjects scaffolds each language under another
// name than the example's and checks the project stands alone: every file
// it needs is there, nothing points back into a corral checkout, the
// example is renamed throughout, and the printed build command is the
// language's. interop's TestScaffold builds and judges such projects.
func TestNewWritesSelfContainedProjects(t *testing.T) {
	tests := []struct {
		lang  string
		need  []string
		build string
		main  string
		test  string
	}{
		{"go", []string{"go.mod", "main.go", "corral/go.mod", "corral/abi/abi.go", "corral/sdk-guest/host_wasip1.go", "corral.yaml"},
			"GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o zz-top.wasm .", "main.go", ""},
		{"assemblyscript", []string{"package.json", "package-lock.json", "asconfig.json", "index.ts", "corral/index.ts", "corral/abort.ts", "test/plugin.test.mjs", "test/host.mjs", "corral.yaml"},
			"npm run build", "index.ts", "npm test"},
		{"c", []string{"Makefile", "zz-top.c", "corral.h", "corral.c", "corral.yaml"}, "make", "zz-top.c", ""},
		{"rust", []string{"Cargo.toml", "Cargo.lock", "src/lib.rs", "corral/Cargo.toml", "corral/src/lib.rs", "corral.yaml"},
			rustBuild, "src/lib.rs", "RUSTC=/usr/bin/rustc /usr/bin/cargo test --offline"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "proj")
			code, stdout, stderr := runCLI(t, "", "plugin", "new", "zz-top", "--lang", tt.lang, dir)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			wants := []string{"cd " + dir, "  " + tt.build + "\n", "corral plugin check --config corral.yaml ", "PLUGINS_DIR"}
			if tt.test != "" {
				wants = append(wants, "  "+tt.test+"\n      runs its unit tests")
			} else if strings.Contains(stdout, "runs its unit tests") {
				t.Errorf("output names a test command:\n%s", stdout)
			}
			for _, want := range wants {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			files := readTree(t, dir)
			for _, n := range tt.need {
				if _, ok := files[n]; !ok {
					t.Errorf("no %s in the project", n)
				}
			}
			for n, text := range files {
				if strings.Contains(text, "../../") {
					t.Errorf("%s refers to a path outside the project", n)
				}
			}
			main := files[tt.main]
			if strings.Contains(main, `"example"`) || strings.Contains(main, "example://") {
				t.Errorf("%s still names the example", tt.main)
			}
			if !strings.Contains(main, `"zz-top"`) || !strings.Contains(main, "zz-top://") {
				t.Errorf("%s does not name the plugin zz-top", tt.main)
			}
			if !strings.Contains(files["corral.yaml"], "\n  zz-top:\n    grants:\n      kv: true\n") {
				t.Errorf("corral.yaml does not grant zz-top kv:\n%s", files["corral.yaml"])
			}
		})
	}
}

// TestNewAssemblyScriptLock checks the project's lock pins what the SDK's
// does, under the project's own name.
func TestNewAssemblyScriptLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if code, _, stderr := runCLI(t, "", "plugin", "new", "zz-top", "--lang", "assemblyscript", dir); code != exitOK {
		t.Fatal(stderr)
	}
	lock := readTree(t, dir)["package-lock.json"]
	if strings.Contains(lock, "corral-sdk-assemblyscript") || strings.Count(lock, `"name": "zz-top"`) != 2 {
		t.Errorf("the lock's root package is not zz-top:\n%.400s", lock)
	}
	if !strings.Contains(lock, `"node_modules/assemblyscript": {
      "version": "0.28.20",`) {
		t.Errorf("the lock does not pin assemblyscript 0.28.20")
	}
}

// TestScaffoldGoVersion keeps the go directive of scaffolded modules equal
// to the repository's.
func TestScaffoldGoVersion(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil || string(m[1]) != goDirective {
		t.Errorf("go.mod says go %s, the scaffold writes go %s", m[1], goDirective)
	}
}
