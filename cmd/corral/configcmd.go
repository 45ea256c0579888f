package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/host/config"
)

func runConfig(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] != "check" {
		fs := newFlags("config", "corral config check FILE", configLong)
		if len(args) > 0 && isHelp(args[0]) {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return exitOK
		}
		if len(args) == 0 {
			return usageErr(e, fs, "missing subcommand")
		}
		return usageErr(e, fs, "unknown subcommand %q", args[0])
	}
	fs := newFlags("config check", "corral config check FILE", configLong)
	pos, code, ok := parse(e, fs, args[1:])
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE")
	}
	cfg, err := config.Load(config.Source{File: pos[0]})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d plugin entries)\n", cfg.File, len(cfg.Plugin))
	return exitOK
}

const configLong = `Validate a YAML or TOML configuration file (with the CORRAL_* environment
applied) without serving. Every problem is printed with its file, line and key;
the exit code is 1 if there is any.`

// printErrors prints each of a joined error's parts on its own line.
func printErrors(e *env, err error) {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, err := range joined.Unwrap() {
			fmt.Fprintln(e.stderr, err)
		}
		return
	}
	fmt.Fprintln(e.stderr, err)
}

func isHelp(s string) bool {
	switch s {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
