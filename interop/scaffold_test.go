package interop

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// envScaffoldLangs lists the languages TestScaffold scaffolds.
const envScaffoldLangs = "SCAFFOLD_LANGS"

// scaffoldNext is what `corral plugin new` printed: the build command, the
// file it builds and the unit test command, if any.
type scaffoldNext struct {
	build, wasm, test string
}

// newProject runs `corral plugin new NAME --lang LANG DIR` in an empty
// temporary directory outside the repository and reads its next steps.
func newProject(t *testing.T, name, lang string) (string, scaffoldNext) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	out, err := exec.Command(corralBin, "plugin", "new", name, "--lang", lang, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("corral plugin new: %v\n%s", err, out)
	}
	// Next:
	//   cd DIR
	//   BUILD
	//       builds WASM
	//   [TEST
	//       runs its unit tests …]
	var next scaffoldNext
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "cd "+dir && i+2 < len(lines) {
			next.build = strings.TrimSpace(lines[i+1])
			next.wasm = strings.TrimPrefix(strings.TrimSpace(lines[i+2]), "builds ")
			if i+4 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+4]), "runs its unit tests") {
				next.test = strings.TrimSpace(lines[i+3])
			}
		}
	}
	if next.build == "" || next.wasm == "" {
		t.Fatalf("corral plugin new printed no build command and file:\n%s", out)
	}
	if !strings.Contains(string(out), "corral plugin check --config corral.yaml "+next.wasm) {
		t.Errorf("corral plugin new does not say how to check %s:\n%s", next.wasm, out)
	}
	return dir, next
}

// runIn runs a printed command in dir, with nothing of the repository in
// its environment.
func runIn(t *testing.T, dir, command string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in %s: %v\n%s", command, dir, err, out)
	}
}

// buildProject runs the printed build command in dir and returns the
// built file.
func buildProject(t *testing.T, dir string, next scaffoldNext) string {
	t.Helper()
	runIn(t, dir, next.build)
	wasm := filepath.Join(dir, filepath.FromSlash(next.wasm))
	if _, err := os.Stat(wasm); err != nil {
		t.Fatalf("%s did not build %s: %v", next.build, next.wasm, err)
	}
	return wasm
}

// TestScaffold writes a project with `corral plugin new` for each language
// of SCAFFOLD_LANGS in an empty directory outside the repository, builds it
// with the one command the scaffold printed, runs its unit tests when it
// printed a test command, passes `corral plugin check` with the project's
// corral.yaml, and judges the plugin like the examples
// (TestJudge). One project per language is named example, as the judge
// expects; a second one, in C (the quickest to build), checks that another
// name renames the plugin and its scheme.
func TestScaffold(t *testing.T) {
	list := os.Getenv(envScaffoldLangs)
	if list == "" {
		t.Skipf("%s is unset: `make test-scaffold` runs it, or %s=go,c go test -run '^TestScaffold$' .", envScaffoldLangs, envScaffoldLangs)
	}
	if why := missingBuild(corralBin); why != "" {
		t.Fatal(why)
	}
	for _, lang := range strings.Split(list, ",") {
		lang = strings.TrimSpace(lang)
		t.Run(lang, func(t *testing.T) {
			dir, next := newProject(t, "example", lang)
			wasm := buildProject(t, dir, next)
			if next.test != "" {
				runIn(t, dir, next.test)
			}
			check := exec.Command(corralBin, "plugin", "check", "--config", "corral.yaml", next.wasm)
			check.Dir = dir
			if out, err := check.CombinedOutput(); err != nil {
				t.Fatalf("corral plugin check: %v\n%s", err, out)
			}
			judgeWasm(t, wasm)
		})
	}
	t.Run("renamed", func(t *testing.T) {
		dir, next := newProject(t, "notes-2", "c")
		wasm := buildProject(t, dir, next)
		out, err := exec.Command(corralBin, "plugin", "inspect", "--json", wasm).Output()
		if err != nil {
			t.Fatalf("corral plugin inspect: %v", err)
		}
		var m struct {
			Name      string   `json:"name"`
			Schemes   []string `json:"schemes"`
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("inspect --json: %v\n%s", err, out)
		}
		if m.Name != "notes-2" || len(m.Schemes) != 1 || m.Schemes[0] != "notes-2" || len(m.Resources) == 0 || !strings.HasPrefix(m.Resources[0].URI, "notes-2://") {
			t.Errorf("renamed plugin: name %q, schemes %v, resources %v", m.Name, m.Schemes, m.Resources)
		}
	})
}
