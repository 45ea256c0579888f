package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// env is what a command runs with; tests substitute it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand.
type command struct {
	name  string
	short string
	run   func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"serve", "serve MCP from the plugins (stdio by default, or HTTP)", runServe},
		{"plugin", "inspect or check a plugin file", runPlugin},
		{"config", "validate a configuration file", runConfig},
		{"version", "print the version", runVersion},
	}
}

const topUsage = `corral serves MCP resources, prompts and tools from sandboxed WebAssembly plugins.

Usage:
  corral <command> [flags] [args]

Commands:
%s
Run "corral <command> --help" for a command's flags.
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	usage := func(w io.Writer) {
		var b strings.Builder
		for _, c := range commands() {
			fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.short)
		}
		fmt.Fprintf(w, topUsage, b.String())
	}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "corral: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// parse parses args with fs, allowing flags after positional arguments,
// and returns the positional arguments. ok is false when the command must
// stop: code is then its exit code (0 after --help, 2 on bad usage).
func parse(e *env, fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return nil, exitOK, false
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "corral %s: %v\n\n", fs.Name(), err)
			fs.SetOutput(e.stderr)
			fs.Usage()
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, exitOK, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlags returns a FlagSet whose usage prints synopsis, long help and
// the flags.
func newFlags(name, synopsis, long string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis, strings.TrimSpace(long))
		has := false
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintf(w, "\nFlags:\n")
			fs.VisitAll(func(f *flag.Flag) {
				name, use := flag.UnquoteUsage(f)
				fmt.Fprintf(w, "  --%s %s\n    \t%s\n", f.Name, name, use)
			})
		}
	}
	return fs
}

func usageErr(e *env, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "corral %s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.SetOutput(e.stderr)
	fs.Usage()
	return exitUsage
}
