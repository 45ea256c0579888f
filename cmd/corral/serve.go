package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/registry"
	"github.com/corral-mcp/corral/host/transport"
)

const serveLong = `Serve MCP from the plugins in the plugin directory, hot-reloading them as files
are added, replaced or removed.

Without --http or --ws, serve speaks newline-delimited JSON-RPC on stdin/stdout
(logs go to stderr) and exits when stdin closes. --http serves Streamable HTTP
at /mcp plus /healthz and /readyz on the same listener, and /metrics and /status
there to operator tokens only (auth.operator); --admin serves all four on their
own listener, without credentials.

Values come from defaults < the config file < CORRAL_* environment < flags; see
docs/configuration.md. SIGHUP reloads the configuration file, as a change to
it does. SIGINT or SIGTERM shuts down gracefully; a second one exits at once.`

// shutdownTimeout bounds the graceful shutdown.
const shutdownTimeout = 10 * time.Second

func runServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags("serve", "corral serve [--config FILE] [--plugins DIR] [--http ADDR] [--ws ADDR] [--admin ADDR] [--log-level L]", serveLong)
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

// pageCache is the list fallback's cache of n bytes, nil for 0 (none).
func pageCache(n int) *catalog.PageCache {
	if n == 0 {
		return nil
	}
	return catalog.NewPageCache(n)
}

// observer adapts metrics to the plugin runtime's Observer.
type observer struct{ m *metrics.Metrics }

func (o observer) Call(p, op string, d time.Duration, c plugin.ErrorClass) {
	o.m.Call(p, op, d, string(c))
}
func (o observer) Instance(p string, created bool, reason string) { o.m.Instance(p, created, reason) }
func (o observer) Quarantine(p string, on bool)                   { o.m.Quarantine(p, on) }
func (o observer) Denied(p, capability, reason string)            { o.m.Denied(p, capability, reason) }
func (o observer) Rejected(p, op string)                          { o.m.Rejected(p, op) }

var _ plugin.Observer = observer{}

func serve(parent context.Context, e *env, src config.Source, cfg *config.Config) error {
	level := &slog.LevelVar{}
	level.Set(parseLevel(cfg.Log.Level))
	log := newLogger(e.stderr, cfg.Log.Format, level)
	bi := readBuildInfo()
	log.Info("corral starting", "version", bi.Version, "commit", bi.Commit, "config", cfg.File, "plugins", cfg.Plugins.Dir)

	// First signal: graceful shutdown. Second: exit at once.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// SIGHUP reloads (see onHangup); caught from the start so that it
	// never takes the default action, which is to exit.
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)
	go func() {
		select {
		case s := <-sigs:
			log.Info("shutting down", "signal", s.String())
			cancel()
		case <-ctx.Done():
			return
		}
		if s, ok := <-sigs; ok {
			log.Warn("second signal; exiting now", "signal", s.String())
			os.Exit(exitFail)
		}
	}()

	m := metrics.New(metrics.BuildInfo{Version: bi.Version, Commit: bi.Commit})
	// The notification hub: plugin notify calls, plugin-set swaps and file
	// watchers in; listen streams and sessions out. A resource update
	// reaches only those the policy lets see the resource.
	var cat *catalog.Catalog
	hub := notify.New(notify.Options{Visible: func(p abi.Principal, uri string) bool {
		return cat.Current().URIVisible(p, uri)
	}})
	if err := checkEngines(cfg); err != nil {
		return err
	}
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{
		CacheDir: cfg.Plugins.CacheDir, DataDir: cfg.Plugins.DataDir, Engine: cfg.Plugins.Engine,
		Logger: log, Observer: observer{m}, Notifier: hub, Compile: registry.CompileLimits(cfg.Plugins.Compile),
	})
	if err != nil {
		return fmt.Errorf("plugin runtime: %w", err)
	}
	log.Info("plugin runtime", "engine", rt.DefaultEngine(), "engines", plugin.Engines())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		rt.Close(ctx)
	}()

	var progress func(done, total int)
	if isTerminal(e.stderr) {
		progress = func(done, total int) {
			if total < 2 {
				return
			}
			fmt.Fprintf(e.stderr, "\rloading plugins: %d/%d", done, total)
			if done == total {
				fmt.Fprintln(e.stderr)
			}
		}
	}
	sec, err := buildSecurity(cfg, log)
	if err != nil {
		return err
	}
	// Host-side watchers on the roots granted to file:// plugins.
	files, err := notify.NewFileWatcher(hub, log)
	if err != nil {
		return err
	}
	for _, d := range cfg.Deprecations() {
		log.Warn(d)
	}
	// One key ring seals every token the server hands out (cursors,
	// requestState); a reload updates it in place.
	ring, err := keys.New(cfg.Keys.Bytes())
	if err != nil {
		return err
	}
	var curCfg atomic.Pointer[config.Config]
	curCfg.Store(cfg)
	reg, err := registry.New(registry.Options{
		Dir: cfg.Plugins.Dir, Loader: registry.WasmLoader(rt), Config: cfg,
		SetOptions: catalog.Options{PageSize: cfg.Catalog.PageSize, Keys: ring,
			Policy: sec.policy, Authenticated: sec.authed,
			ListBudget: cfg.Catalog.ListBudget, Pages: pageCache(cfg.Catalog.ListCacheBytes),
			Logger: log, ListSkipped: m.ListSkipped},
		Debounce: cfg.Plugins.Debounce, Rescan: rescan(cfg.Plugins.Rescan),
		CompileWorkers: cfg.Plugins.Compile.Workers, CompileTimeout: cfg.Plugins.Compile.Timeout,
		Logger: log, Observer: m, Progress: progress,
		OnChange: func(ev registry.Event) {
			log.Info("plugin lists changed", "generation", ev.Generation,
				"resources", ev.Resources, "prompts", ev.Prompts, "tools", ev.Tools)
			hub.ListsChanged(ev.Resources, ev.Prompts, ev.Tools)
			files.SetRoots(fileRoots(cat.Current(), curCfg.Load()))
		},
	})
	if err != nil {
		return err
	}
	cat = reg.Catalog()
	health := metrics.NewHealth(func() error {
		if cfg.Plugins.Dir != "" {
			return reg.NotReady()
		}
		return nil
	})
	srv := mcp.NewServer(reg.Catalog(), mcp.Options{Name: "corral", Version: bi.Version, Logger: log, AllowCompletion: sec.limiter.Allow, Hub: hub})

	// Listeners first, so a bad address fails before plugins are compiled.
	var servers []*http.Server
	var mcpURL string // where clients connect, once the HTTP listener is up
	listen := func(addr string, h http.Handler) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		if addr == cfg.HTTP.Addr {
			mcpURL = "http://" + ln.Addr().String() + "/mcp"
		}
		hs := &http.Server{Handler: h, ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		servers = append(servers, hs)
		go func() {
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("http server failed", "addr", addr, "err", err)
				cancel()
			}
		}()
		log.Info("listening", "addr", ln.Addr().String())
		return nil
	}
	// Streamable HTTP at /mcp. Its handler exists without the listener too:
	// WebSocket listen streams and requests count against its per-client
	// bounds.
	httpHandler := transport.NewHTTPHandler(srv, transport.HTTPOptions{
		AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: originHosts(cfg.HTTP.AllowedOrigins),
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, MaxListensPerClient: cfg.HTTP.MaxListensPerClient,
		MaxSessions: cfg.HTTP.MaxSessions, MaxSessionsPerClient: cfg.HTTP.MaxSessionsPerClient,
		ReadBodyTimeout:           cfg.HTTP.ReadBodyTimeout,
		MaxConcurrentPerPrincipal: cfg.HTTP.MaxConcurrentPerPrincipal,
		MaxConcurrentPerAddress:   cfg.HTTP.MaxConcurrentPerAddress,
		Proxies:                   transport.TrustedProxies{Prefixes: cfg.HTTP.TrustedProxyPrefixes(), Header: cfg.HTTP.ForwardedHeader},
		Logger:                    log, PrincipalFunc: auth.PrincipalOf,
	})
	// WebSocket at /ws: on the HTTP listener, and on --ws ADDR if set.
	wsHandler := transport.NewWSHandler(srv, transport.WSOptions{
		AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: originHosts(cfg.HTTP.AllowedOrigins),
		Logger: log, PrincipalFunc: auth.PrincipalOf, ListenBound: httpHandler.ListenBound,
		RequestBound: httpHandler.RequestBound,
	})
	guard := transport.HostGuard{AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: originHosts(cfg.HTTP.AllowedOrigins), Logger: log}
	ops := operatorRoutes(m, reg, log)
	if cfg.WS.Addr != "" {
		mux := http.NewServeMux()
		mux.Handle("/ws", guard.Wrap(sec.authn.Middleware(wsHandler)))
		if err := listen(cfg.WS.Addr, mux); err != nil {
			return err
		}
	}
	if cfg.HTTP.Addr != "" {
		m.Sessions(func() (int, int64, int64) {
			st := httpHandler.SessionStats()
			return st.Open, st.Evicted, st.Refused
		})
		m.Admission(func() (int64, int64) {
			st := httpHandler.AdmissionStats()
			return st.Concurrency, st.BodyTimeout
		})
		if err := listen(cfg.HTTP.Addr, mcpRoutes(guard, sec.authn, httpHandler, wsHandler, ops, health)); err != nil {
			return err
		}
	}
	if cfg.Admin.Addr != "" {
		if err := listen(cfg.Admin.Addr, adminRoutes(guard, ops, health)); err != nil {
			return err
		}
	}

	// Load the plugins, then keep watching them and the config file.
	if cfg.Plugins.Dir != "" {
		if err := reg.Load(ctx, 10*time.Second); err != nil {
			log.Error("plugin directory", "err", err)
		}
		st := reg.Status()
		log.Info("plugins loaded", "serving", len(reg.Catalog().Current().Providers()), "failed", len(st.Failed()),
			"generation", st.Generation)
	}
	if mcpURL != "" {
		// One plain line for the person who ran `make run`: where to connect.
		fmt.Fprintf(e.stderr, "corral: serving %d plugins; connect an MCP client (Streamable HTTP) to %s\n",
			len(reg.Catalog().Current().Providers()), mcpURL)
	}
	var bg sync.WaitGroup
	bgCtx, stopBG := context.WithCancel(ctx)
	if cfg.Plugins.Dir != "" {
		bg.Add(1)
		go func() { defer bg.Done(); reg.Run(bgCtx) }()
	}
	files.SetRoots(fileRoots(reg.Catalog().Current(), cfg))
	bg.Add(1)
	go func() { defer bg.Done(); files.Run(bgCtx) }()
	var watcher *config.Watcher
	if cfg.File != "" {
		watcher = config.NewWatcher(src, cfg, config.WatchOptions{Logger: log, OnReload: func(_, n *config.Config) {
			level.Set(parseLevel(n.Log.Level))
			if err := ring.Update(n.Keys.Bytes()); err != nil {
				log.Error("keys not reloaded; keeping the running secrets", "err", err)
			}
			curCfg.Store(n)
			reg.UpdateConfig(n)
			files.SetRoots(fileRoots(reg.Catalog().Current(), n))
		}})
		bg.Add(1)
		go func() { defer bg.Done(); watcher.Run(bgCtx) }()
	}
	bg.Add(1)
	go func() { defer bg.Done(); onHangup(bgCtx, hups, watcher, log) }()

	if cfg.HTTP.Addr == "" && cfg.WS.Addr == "" {
		// stdio: serve until stdin closes or a signal arrives.
		err := transport.ServeStdio(ctx, srv, e.stdin, e.stdout, transport.StdioOptions{Logger: log, Principal: sec.stdio})
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Error("stdio", "err", err)
		}
		log.Info("stdio closed; shutting down")
	} else {
		<-ctx.Done()
	}

	// Graceful shutdown: not ready, stop accepting, finish requests, close.
	health.SetDraining()
	sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer scancel()
	hub.Close() // listen streams end gracefully, sessions' streams stop
	wsHandler.Close()
	httpHandler.Close()
	for _, hs := range servers {
		if err := hs.Shutdown(sctx); err != nil {
			log.Warn("http shutdown", "err", err)
		}
	}
	stopBG()
	bg.Wait()
	if err := reg.Close(sctx); err != nil {
		log.Warn("closing plugins", "err", err)
	}
	log.Info("corral stopped")
	return nil
}

// onHangup reloads the configuration file on every SIGHUP until ctx is
// done, exactly as the file watcher does on a change: a file that fails to
// load leaves the running configuration in force. Without a configuration
// file (w nil) there is nothing to reload, and it says so.
func onHangup(ctx context.Context, hups <-chan os.Signal, w *config.Watcher, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hups:
			if w == nil {
				log.Info("SIGHUP: no configuration file (--config); nothing to reload")
				continue
			}
			log.Info("SIGHUP: reloading the configuration", "file", w.Current().File)
			w.Reload()
		}
	}
}

// fileRoots returns the file roots granted to the plugins of set that
// serve file:// URIs and use the files capability: the FileWatcher turns
// changes under them into resource updates.
func fileRoots(set *catalog.Set, cfg *config.Config) []string {
	var roots []string
	if set == nil {
		return nil
	}
	for _, p := range set.Providers() {
		m := p.Manifest()
		if slices.Contains(m.Schemes, "file") && slices.Contains(m.Capabilities, abi.CapFiles) {
			roots = append(roots, cfg.PluginSettings(m.Name).Grants.Files...)
		}
	}
	return roots
}

// rescan maps the config's "0 = off" to the registry's "negative = off".
func rescan(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// originHosts turns configured origins (https://app.example.com) into the
// host[:port] form the HTTP transport matches Origin headers against.
func originHosts(origins []string) []string {
	var out []string
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}
