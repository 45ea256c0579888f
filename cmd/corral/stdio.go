package main

import "fmt"

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
