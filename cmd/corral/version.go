package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/corral-mcp/corral/host/plugin"
)

// buildInfo is the module version and VCS commit the binary was built from,
// and the versions of the WebAssembly engines compiled into it.
type buildInfo struct {
	Version  string
	Commit   string
	Modified bool
	// Engines maps each engine compiled in (plugin.Engines) to the version
	// of the Go module that provides it, "(unknown)" when the binary
	// carries no module information.
	Engines map[string]string
}

// engineModules names the Go module behind each engine. wasmtime-go's
// major version follows the wasmtime release it binds (v39 binds 39.x).
var engineModules = map[string]string{
	plugin.EngineWazero:   "github.com/tetratelabs/wazero",
	plugin.EngineWasmtime: "github.com/bytecodealliance/wasmtime-go/v39",
}

func readBuildInfo() buildInfo {
	bi := buildInfo{Version: "(devel)", Engines: map[string]string{}}
	for _, name := range plugin.Engines() {
		bi.Engines[name] = "(unknown)"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return bi
	}
	for _, dep := range info.Deps {
		for name, mod := range engineModules {
			if _, in := bi.Engines[name]; in && dep.Path == mod {
				bi.Engines[name] = dep.Version
			}
		}
	}
	if v := info.Main.Version; v != "" {
		bi.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			bi.Commit = s.Value
		case "vcs.modified":
			bi.Modified = s.Value == "true"
		}
	}
	return bi
}

func (b buildInfo) String() string {
	s := "corral " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func runVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags("version", "corral version", `Print the module version and VCS commit corral was built from, the Go
release, and each WebAssembly engine compiled in with its version (wazero
always; wasmtime in a binary from make build-wasmtime).`)
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	bi := readBuildInfo()
	fmt.Fprintln(e.stdout, bi)
	for _, name := range plugin.Engines() {
		def := ""
		if name == plugin.DefaultEngine {
			def = " (default)"
		}
		fmt.Fprintf(e.stdout, "engine %s %s%s\n", name, bi.Engines[name], def)
	}
	return exitOK
}
