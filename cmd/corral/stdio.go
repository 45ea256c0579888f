package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/corral-mcp/corral/host/config"
)

// stdioOnly turns the command line's flag values into those of
// `serve --stdio`: the listeners the configuration file or the environment
// name are switched off (the flag layer wins over both), so that corral
// answers on stdin/stdout however the file it is pointed at is set up; a
// client-launched copy never fights `make run` for its port. --admin on
// the same command line is kept (the operator asked for it there); --http
// or --ws contradicts --stdio and is an error.
func stdioOnly(flags map[string]any) error {
	for _, key := range []string{"http.addr", "ws.addr"} {
		if v, ok := flags[key]; ok && v != "" {
			return fmt.Errorf("--stdio serves on stdin/stdout only; drop the flag for %s (%v)", key, v)
		}
		flags[key] = ""
	}
	if _, ok := flags["admin.addr"]; !ok {
		flags["admin.addr"] = ""
	}
	return nil
}

// listenError says why a listener could not open and what to do; an
// address in use adds the form for a client that launches corral itself,
// which needs no port at all.
func listenError(addr string, err error) error {
	hint := config.BindProblem(addr, err)
	if errors.Is(err, syscall.EADDRINUSE) {
		hint += "; a client that launches corral itself (Claude Desktop, VS Code, the Inspector) wants `corral serve --stdio`"
	}
	return fmt.Errorf("listen: %s (%w)", hint, err)
}
