package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
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
	fs := newFlags("config check", "corral config check [--portable] FILE", configLong)
	portable := fs.Bool("portable", false, "check the file alone: skip what depends on this machine and binary (directories and plugin files exist, ports free, engines compiled in)")
	pos, code, ok := parse(e, fs, args[1:])
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE")
	}
	cfg, err := config.Load(config.Source{File: pos[0]})
	if err != nil {
		n := printErrors(e, err)
		fmt.Fprintf(e.stderr, "%d %s\n", n, plural(n, "problem", "problems"))
		return exitFail
	}
	if !*portable {
		if errs := machineProblems(cfg); len(errs) > 0 {
			for _, err := range errs {
				fmt.Fprintln(e.stderr, err)
			}
			fmt.Fprintf(e.stderr, "%d %s with this machine or binary (--portable skips these checks)\n",
				len(errs), plural(len(errs), "problem", "problems"))
			return exitFail
		}
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d plugin entries)\n", cfg.File, len(cfg.Plugin))
	return exitOK
}

const configLong = `Validate a YAML or TOML configuration file (with the CORRAL_* environment
applied) without serving. Every problem in the file is printed at once, each
with its file, line and key, the offending value and the form the key accepts;
an unknown key gets the nearest known one. Then, unless --portable, what the
file needs of this machine and binary: the plugin directory and bound plugin
files exist, the listeners' ports are free, the engines named are compiled in.
The exit code is 1 if there is any problem.`

// machineProblems is what a valid configuration needs of this machine and
// this binary (config.MachineProblems, and the engines compiled in).
func machineProblems(cfg *config.Config) []error {
	var errs []error
	if err := plugin.CheckEngine(cfg.Plugins.Engine); err != nil {
		errs = append(errs, cfg.Errorf("plugins.engine", "%v", err))
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugin)) {
		if en := cfg.Plugin[name].Engine; en != "" {
			if err := plugin.CheckEngine(en); err != nil {
				errs = append(errs, cfg.Errorf("plugin."+name+".engine", "%v", err))
			}
		}
	}
	errs = append(errs, cfg.MachineProblems()...)
	config.SortErrors(errs)
	return errs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printErrors prints each of a joined error's parts on its own line and
// returns how many it printed.
func printErrors(e *env, err error) int {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, err := range joined.Unwrap() {
			fmt.Fprintln(e.stderr, err)
		}
		return len(joined.Unwrap())
	}
	fmt.Fprintln(e.stderr, err)
	return 1
}

func isHelp(s string) bool {
	switch s {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
