package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/corral-mcp/corral/host/config"
)

const serveLong = `Serve MCP from the plugins in the plugin directory, hot-reloading them as files
are added, replaced or removed.

--stdio speaks newline-delimited JSON-RPC on stdin/stdout (logs go to stderr)
and exits when stdin closes, ignoring any http.addr, ws.addr or admin.addr
from the configuration file or the environment: it is what an MCP client that
launches corral runs (Claude Desktop, VS Code, the Inspector). Without
--stdio, serve speaks stdio only when no HTTP or WebSocket address is set.
--http serves Streamable HTTP
at /mcp plus /healthz and /readyz on the same listener, and /metrics and /status
there to operator tokens only (auth.operator); --admin serves all four on their
own listener, without credentials.

Values come from defaults < the config file < CORRAL_* environment < flags; see
docs/configuration.md. SIGHUP reloads the configuration file, as a change to
it does. SIGINT or SIGTERM shuts down gracefully; a second one exits at once.`

// shutdownTimeout bounds the graceful shutdown.
const shutdownTimeout = 10 * time.Second

func runServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags("serve", "corral serve [--stdio] [--config FILE] [--plugins DIR] [--http ADDR] [--ws ADDR] [--admin ADDR] [--log-level L]", serveLong)
	stdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout only, ignoring the configured http.addr, ws.addr and admin.addr (--admin still applies)")
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	fs.String("plugins", "", "plugin `DIR`ectory: every *.wasm in it is served (plugins.dir)")
	fs.String("http", "", "serve Streamable HTTP on `ADDR` (host:port) (http.addr)")
	fs.String("ws", "", "serve WebSocket on `ADDR` (host:port) (ws.addr)")
	fs.String("admin", "", "serve /metrics, /status, /healthz, /readyz on `ADDR` (admin.addr)")
	fs.String("log-level", "", "log `level`: debug, info, warn or error (log.level)")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	keys := map[string]string{"plugins": "plugins.dir", "http": "http.addr", "ws": "ws.addr", "admin": "admin.addr", "log-level": "log.level"}
	flags := map[string]any{}
	fs.Visit(func(f *flag.Flag) {
		if k, ok := keys[f.Name]; ok {
			flags[k] = f.Value.String()
		}
	})
	if *stdio {
		if err := stdioOnly(flags); err != nil {
			return usageErr(e, fs, "%v", err)
		}
	}
	src := config.Source{File: *cfgFile, Flags: flags}
	cfg, err := config.Load(src)
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	if err := serve(ctx, e, src, cfg); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	return exitOK
}

func serve(parent context.Context, e *env, src config.Source, cfg *config.Config) error {
	// Signals are caught from the start; those that arrive while the app
	// is built wait in the channels. SIGHUP reloads (see onHangup), and
	// never takes its default action, which is to exit.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)
	a, err := newApp(parent, src, cfg, e.stderr)
	if err != nil {
		return err
	}
	// First signal: graceful shutdown. Second: exit at once.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		select {
		case s := <-sigs:
			a.log.Info("shutting down", "signal", s.String())
			cancel()
		case <-ctx.Done():
			return
		}
		if s, ok := <-sigs; ok {
			a.log.Warn("second signal; exiting now", "signal", s.String())
			os.Exit(exitFail)
		}
	}()
	defer a.Stop()
	if err := a.Start(ctx, cancel); err != nil {
		return err
	}
	hctx, hcancel := context.WithCancel(ctx)
	hdone := make(chan struct{})
	go func() { defer close(hdone); onHangup(hctx, hups, a.watcher, a.log, a.hangup) }()
	a.Serve(ctx, e.stdin, e.stdout)
	hcancel()
	<-hdone
	return nil
}

// onHangup reloads the configuration file on every SIGHUP until ctx is
// done, exactly as the file watcher does on a change: a file that fails to
// load leaves the running configuration in force. Without a configuration
// file (w nil) there is nothing to reload, and it says so. also runs on
// every SIGHUP too (the audit log reopened, the TLS certificate reloaded).
func onHangup(ctx context.Context, hups <-chan os.Signal, w *config.Watcher, log *slog.Logger, also func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hups:
			also()
			if w == nil {
				log.Info("SIGHUP: no configuration file (--config); nothing to reload")
				continue
			}
			log.Info("SIGHUP: reloading the configuration", "file", w.Current().File)
			w.Reload()
		}
	}
}
