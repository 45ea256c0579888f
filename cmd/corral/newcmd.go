package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corral "github.com/corral-mcp/corral"
)

const newLong = `Write a new plugin project for one of the SDK languages into DIR (default
./NAME, which must not exist or be empty). The project carries its SDK, so it
builds outside this repository with one command; it starts as the example
provider of docs/plugins.md, renamed NAME (its plugin name and URI scheme).
NAME is lowercase letters, digits and dashes, starting with a letter.`

// goDirective is the go line of the modules the Go scaffold writes, that
// of the repository's go.mod (TestScaffoldGoVersion keeps them equal).
const goDirective = "1.26.0"

var scaffoldName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// scaffoldFile is one file of a new project: its slash-separated path in
// the project and its content.
type scaffoldFile struct {
	path string
	data []byte
}

// scaffoldLang is how the scaffold writes a project in one language.
type scaffoldLang struct {
	// files returns the project's files for the plugin name.
	files func(name string) ([]scaffoldFile, error)
	// build is the one command that builds the project; wasm names the
	// file it writes, relative to the project.
	build, wasm func(name string) string
	// test is the command that runs the project's unit tests, or "".
	test string
	// toolchain says what the build needs.
	toolchain string
}

var scaffoldLangs = map[string]scaffoldLang{
	"go": {
		files: goProject,
		build: func(n string) string {
			return "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o " + n + ".wasm ."
		},
		wasm:      func(n string) string { return n + ".wasm" },
		toolchain: "Go " + goDirective + " or newer",
	},
	"assemblyscript": {
		files:     asProject,
		build:     func(string) string { return "npm run build" },
		wasm:      func(n string) string { return n + ".wasm" },
		test:      "npm test",
		toolchain: "node 20 or newer and npm (the first build installs assemblyscript 0.28.20 from package-lock.json)",
	},
	"c": {
		files:     cProject,
		build:     func(string) string { return "make" },
		wasm:      func(n string) string { return n + ".wasm" },
		toolchain: "clang, lld and wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)",
	},
	"rust": {
		files: rustProject,
		build: func(string) string { return rustBuild },
		test:  "RUSTC=/usr/bin/rustc /usr/bin/cargo test --offline",
		wasm: func(n string) string {
			return "target/wasm32-wasi/release/" + strings.ReplaceAll(n, "-", "_") + ".wasm"
		},
		toolchain: "rustc and cargo with the wasm32-wasi target (Debian: rustc cargo libstd-rust-dev-wasm32); no crates",
	},
}

// rustBuild calls Debian's toolchain by path: a rustup toolchain first on
// PATH may have no wasm32-wasi target.
const rustBuild = "RUSTC=/usr/bin/rustc /usr/bin/cargo build --offline --release --target wasm32-wasi"

func langNames() []string {
	names := make([]string, 0, len(scaffoldLangs))
	for n := range scaffoldLangs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func runNew(_ context.Context, e *env, args []string) int {
	fs := newFlags("plugin new", "corral plugin new NAME --lang go|c|assemblyscript|rust [DIR]", newLong)
	lang := fs.String("lang", "", "the SDK `language`: "+strings.Join(langNames(), ", "))
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr(e, fs, "want NAME and an optional DIR")
	}
	name, dir := pos[0], pos[0]
	if len(pos) == 2 {
		dir = pos[1]
	}
	l, known := scaffoldLangs[*lang]
	switch {
	case *lang == "":
		return usageErr(e, fs, "--lang is required (%s)", strings.Join(langNames(), ", "))
	case !known:
		return usageErr(e, fs, "unknown language %q (%s)", *lang, strings.Join(langNames(), ", "))
	case !scaffoldName.MatchString(name):
		return usageErr(e, fs, "plugin name %q must match %s: it is also the URI scheme", name, scaffoldName)
	}
	if err := scaffold(l, name, dir); err != nil {
		fmt.Fprintf(e.stderr, "corral plugin new: %v\n", err)
		return exitFail
	}
	wasm := l.wasm(name)
	test := ""
	if l.test != "" {
		test = fmt.Sprintf("  %s\n      runs its unit tests on a fake host\n", l.test)
	}
	fmt.Fprintf(e.stdout, `Wrote %s: plugin %q, the example provider of docs/plugins.md in %s.
The build needs %s.

Next:
  cd %s
  %s
      builds %s
%s  corral plugin check --config corral.yaml %s
      loads it in the sandbox with the grants of corral.yaml and lists what it serves
  cp %s PLUGINS_DIR/
      a running "corral serve" hot-loads every *.wasm of its plugins.dir; give it
      the grants of corral.yaml under plugin.%s in the server's configuration
`, dir, name, *lang, l.toolchain, dir, l.build(name), wasm, test, wasm, wasm, name)
	return exitOK
}

// scaffold writes the project for name into dir, which must not exist or
// be empty.
func scaffold(l scaffoldLang, name, dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	files, err := l.files(name)
	if err != nil {
		return err
	}
	files = append(files, scaffoldFile{"corral.yaml", []byte(grantsFile(name))})
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// grantsFile is the configuration that grants the example what it asks
// for, but files and http, which need an operator's roots and hosts.
func grantsFile(name string) string {
	return fmt.Sprintf(`# The grants plugin %[1]s asks for: use it with
#   corral plugin check --config corral.yaml %[1]s.wasm
# and copy the plugin.%[1]s entry into the server's configuration
# (docs/configuration.md). The probe tool also uses files and http:
#   files: ["/srv/notes"]          # roots it may read
#   http: {hosts: ["example.com"]} # hosts it may fetch
plugin:
  %[1]s:
    grants:
      kv: true
      notify: true
      log: true
      config:
        motto: "Small is beautiful"
`, name)
}

// source reads one embedded file of the repository.
func source(p string) ([]byte, error) {
	b, err := corral.Sources.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("scaffold: embedded %s: %w", p, err)
	}
	return b, nil
}

// sourceDir returns the embedded files of dir whose names end in ext
// (test files excluded), as project files under to.
func sourceDir(dir, ext, to string) ([]scaffoldFile, error) {
	entries, err := corral.Sources.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scaffold: embedded %s: %w", dir, err)
	}
	var out []scaffoldFile
	for _, en := range entries {
		n := en.Name()
		if en.IsDir() || !strings.HasSuffix(n, ext) || strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := source(path.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out = append(out, scaffoldFile{path.Join(to, n), b})
	}
	return out, nil
}

// renamed is an example's source made the plugin name's: its quoted
// plugin name and scheme, and its URIs.
func renamed(src []byte, name string, more ...string) []byte {
	pairs := append([]string{`"example"`, `"` + name + `"`, "example://", name + "://"}, more...)
	return []byte(strings.NewReplacer(pairs...).Replace(string(src)))
}

// example reads an example's source and renames it.
func example(p, name string, more ...string) ([]byte, error) {
	b, err := source(p)
	if err != nil {
		return nil, err
	}
	return renamed(b, name, more...), nil
}

func goProject(name string) ([]scaffoldFile, error) {
	main, err := example("examples/go/main.go", name)
	if err != nil {
		return nil, err
	}
	files := []scaffoldFile{
		{"go.mod", []byte(fmt.Sprintf(`module %s

go %s

require github.com/corral-mcp/corral v0.0.0

// The SDK (abi and sdk-guest) travels with the project: corral is not
// published to a registry.
replace github.com/corral-mcp/corral => ./corral
`, name, goDirective))},
		{"main.go", main},
		{"corral/go.mod", []byte("module github.com/corral-mcp/corral\n\ngo " + goDirective + "\n")},
		{".gitignore", []byte("*.wasm\n")},
	}
	abiFiles, err := sourceDir("abi", ".go", "corral/abi")
	if err != nil {
		return nil, err
	}
	sdkFiles, err := sourceDir("sdk-guest", ".go", "corral/sdk-guest")
	if err != nil {
		return nil, err
	}
	return append(append(files, abiFiles...), sdkFiles...), nil
}

func asProject(name string) ([]scaffoldFile, error) {
	index, err := example("examples/assemblyscript/index.ts", name, `"../../sdk/assemblyscript/assembly/index"`, `"./corral/index"`)
	if err != nil {
		return nil, err
	}
	test, err := example("examples/assemblyscript/example.test.mjs", name,
		`"../../sdk/assemblyscript/test/host.mjs"`, `"./host.mjs"`,
		`"../../build/examples/assemblyscript.wasm"`, `"../`+name+`.wasm"`)
	if err != nil {
		return nil, err
	}
	host, err := source("sdk/assemblyscript/test/host.mjs")
	if err != nil {
		return nil, err
	}
	lock, err := source("sdk/assemblyscript/package-lock.json")
	if err != nil {
		return nil, err
	}
	// The SDK's lock pins the same toolchain; only the root package differs.
	lock = []byte(strings.ReplaceAll(string(lock), `"name": "corral-sdk-assemblyscript",
      "version": "1.2.0",`, `"name": "`+name+`",
      "version": "1.0.0",`))
	lock = []byte(strings.Replace(string(lock), `"name": "corral-sdk-assemblyscript"`, `"name": "`+name+`"`, 1))
	files := []scaffoldFile{
		{"index.ts", index},
		{"test/plugin.test.mjs", test},
		{"test/host.mjs", host},
		{"package.json", []byte(fmt.Sprintf(`{
  "name": %q,
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "prebuild": "test -x node_modules/.bin/asc || npm ci --no-audit --no-fund",
    "build": "asc index.ts --config asconfig.json",
    "pretest": "npm run build",
    "test": "node --test test/plugin.test.mjs"
  },
  "devDependencies": {
    "assemblyscript": "0.28.20"
  }
}
`, name))},
		{"package-lock.json", lock},
		{"asconfig.json", []byte(fmt.Sprintf(`{
  "targets": {
    "release": {
      "outFile": %q,
      "optimizeLevel": 3,
      "shrinkLevel": 2
    }
  },
  "options": {
    "runtime": "minimal",
    "exportStart": "_initialize",
    "use": ["abort=corral/abort/corralAbort"]
  }
}
`, name+".wasm"))},
		{".gitignore", []byte("node_modules/\n*.wasm\n")},
	}
	sdk, err := sourceDir("sdk/assemblyscript/assembly", ".ts", "corral")
	if err != nil {
		return nil, err
	}
	return append(files, sdk...), nil
}

func cProject(name string) ([]scaffoldFile, error) {
	src, err := example("examples/c/example.c", name,
		"-I ../../sdk/c -o example.wasm example.c ../../sdk/c/corral.c", "-I . -o "+name+".wasm "+name+".c corral.c",
		"example.c:", name+".c:")
	if err != nil {
		return nil, err
	}
	files := []scaffoldFile{
		{name + ".c", src},
		{"Makefile", []byte(fmt.Sprintf(`# Builds %[1]s.wasm with clang for wasm32-wasi as a reactor.
CC := clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor
CFLAGS := -Oz -std=c11 -Wall -Wextra -Wl,--strip-all -I .

%[1]s.wasm: %[1]s.c corral.c corral.h
	$(CC) $(CFLAGS) -o $@ %[1]s.c corral.c

clean:
	rm -f %[1]s.wasm
`, name))},
		{".gitignore", []byte("*.wasm\n")},
	}
	for _, f := range []string{"corral.h", "corral.c"} {
		b, err := source("sdk/c/" + f)
		if err != nil {
			return nil, err
		}
		files = append(files, scaffoldFile{f, b})
	}
	return files, nil
}

func rustProject(name string) ([]scaffoldFile, error) {
	lib, err := example("examples/rust/src/lib.rs", name)
	if err != nil {
		return nil, err
	}
	manifest, err := example("examples/rust/Cargo.toml", name,
		`name = "example"`, `name = "`+name+`"`,
		`path = "../../sdk/rust"`, `path = "corral"`,
		"; `make examples` does this", "")
	if err != nil {
		return nil, err
	}
	lock, err := example("examples/rust/Cargo.lock", name, `name = "example"`, `name = "`+name+`"`)
	if err != nil {
		return nil, err
	}
	crate, err := source("sdk/rust/Cargo.toml")
	if err != nil {
		return nil, err
	}
	files := []scaffoldFile{
		{"Cargo.toml", manifest},
		{"Cargo.lock", lock},
		{"src/lib.rs", lib},
		{"corral/Cargo.toml", crate},
		{".gitignore", []byte("target/\n")},
	}
	src, err := sourceDir("sdk/rust/src", ".rs", "corral/src")
	if err != nil {
		return nil, err
	}
	return append(files, src...), nil
}
