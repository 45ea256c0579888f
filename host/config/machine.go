package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"slices"
	"syscall"
)

// Errorf returns a problem with key, placed as Load places its own: at the
// file and line that set it, or the environment variable or flag.
func (c *Config) Errorf(key, format string, args ...any) *Error {
	if c.origins == nil {
		return &Error{File: c.File, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	return c.origins.errorf(key, format, args...)
}

// MachineProblems checks what the configuration needs of this machine and
// Load leaves to serve time: that the plugin directory exists, that each
// plugin bound by file has its file, and that each listener's port is free
// to bind. `corral config check` runs them unless told the file is meant
// for another machine (--portable). The problems are sorted by line.
func (c *Config) MachineProblems() []error {
	var errs []error
	if d := c.Plugins.Dir; d != "" {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, c.Errorf("plugins.dir", "%s does not exist: create it (mkdir -p %s) or point plugins.dir at the folder of .wasm files", d, d))
		} else if err != nil {
			errs = append(errs, c.Errorf("plugins.dir", "%s: %v", d, err))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Plugin)) {
		p := c.Plugin[name]
		if p.File == "" || !p.Enabled {
			continue
		}
		if fi, err := os.Stat(p.File); err != nil || fi.IsDir() {
			errs = append(errs, c.Errorf("plugin."+name+".file", "%s is not a file: build the plugin there, fix the path, or set plugin.%s.enabled: false", p.File, name))
		}
	}
	seen := map[string]string{}
	for _, l := range []struct{ key, addr string }{{"http.addr", c.HTTP.Addr}, {"ws.addr", c.WS.Addr}, {"admin.addr", c.Admin.Addr}} {
		if l.addr == "" {
			continue
		}
		if other, ok := seen[l.addr]; ok {
			errs = append(errs, c.Errorf(l.key, "%s is also %s: give each listener its own port", l.addr, other))
			continue
		}
		seen[l.addr] = l.key
		if _, port, err := net.SplitHostPort(l.addr); err != nil || port == "0" {
			continue // a malformed address is Load's to report; port 0 is any free port
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			errs = append(errs, c.Errorf(l.key, "%s", BindProblem(l.addr, err)))
			continue
		}
		ln.Close()
	}
	SortErrors(errs)
	return errs
}

// BindProblem says why addr cannot be bound (err from net.Listen) and
// what to do about it.
func BindProblem(addr string, err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("%s is in use (another corral, or `make run`?): stop it or choose another port", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Sprintf("%s: no interface of this machine has that address: use 127.0.0.1, 0.0.0.0 or one of its own", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("%s: a port below 1024 needs privileges: choose a port of 1024 or more", addr)
	}
	return fmt.Sprintf("%s cannot be bound: %v", addr, err)
}
