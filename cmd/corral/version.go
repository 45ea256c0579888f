package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildInfo is the module version and VCS commit the binary was built from.
type buildInfo struct {
	Version  string
	Commit   string
	Modified bool
}

func readBuildInfo() buildInfo {
	bi := buildInfo{Version: "(devel)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return bi
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
	fs := newFlags("version", "corral version", "Print the module version and VCS commit corral was built from.")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	fmt.Fprintln(e.stdout, readBuildInfo())
	return exitOK
}
