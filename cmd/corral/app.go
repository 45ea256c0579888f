package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/auth"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/cluster"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/registry"
	"github.com/corral-mcp/corral/host/tasks"
	"github.com/corral-mcp/corral/host/transport"
)

// App is one corral server: everything `serve` builds from a configuration,
// provisioned by newApp, then started and stopped as a whole. Its core (the
// plugin runtime and registry, the catalog, the notification hub, the key
// ring, authentication, the transports and their listeners) is always
// there; optional parts (a cluster bus, a shared kv store, another plugin
// source) are built by newApp from their configuration and plug in as a
// Part.
type App struct {
	tasks *tasks.Manager // tool calls running as tasks
	src   config.Source
	cfg   atomic.Pointer[config.Config] // the configuration in force; a reload replaces it
	log   *slog.Logger
	level *slog.LevelVar
	out   io.Writer // the person's terminal (stderr): where to connect

	metrics *metrics.Metrics
	health  *metrics.Health
	hub     *notify.Hub
	files   *notify.FileWatcher
	ring    *keys.Ring
	sec     *security
	rt      *plugin.Runtime
	reg     *registry.Registry
	srv     *mcp.Server
	httpH   *transport.HTTPHandler
	wsH     *transport.WSHandler
	watcher *config.Watcher // nil without a configuration file
	cluster *cluster.Conn   // nil without cluster.nats
	parts   []Part
	tls     *tls.Config // the listeners', nil for plain HTTP
	hangups []func()    // what SIGHUP does besides reloading the configuration (ops.go)
	// pluginDir is the directory the registry serves: plugins.dir, or
	// the mirror of the cluster's plugin bucket; "" serves none.
	pluginDir string

	started []Part // the parts Start started, in order
	servers []*http.Server
	mcpURL  string // where clients connect, once the HTTP listener is up
	stopBG  context.CancelFunc
	bg      sync.WaitGroup
}

// Part is an optional piece of an App. newApp builds it, handing it what it
// needs from the core; Start runs it before the listeners open and the
// plugins load (so what plugins and requests use is there), and Stop ends
// it after the listeners are shut and the plugins closed. ctx in Start
// lives as long as the app serves; ctx in Stop bounds the shutdown. A Part
// whose outside service is unreachable still starts: a replica serves what
// it can and says what is degraded.
type Part interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// validate checks, without I/O, what the configuration's own validation
// cannot: that this binary can run what it asks for.
func validate(cfg *config.Config) error {
	return checkEngines(cfg)
}

// newApp validates cfg and provisions an App from it: every part built and
// connected, nothing listening, no plugin loaded, nothing running. out
// receives the plain line for a person: the address to connect to (load
// progress is logged, terminal or not).
func newApp(ctx context.Context, src config.Source, cfg *config.Config, out io.Writer) (*App, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	a := &App{src: src, out: out, level: &slog.LevelVar{}, pluginDir: cfg.Plugins.Dir}
	a.cfg.Store(cfg)
	a.level.Set(parseLevel(cfg.Log.Level))
	a.log = newLogger(out, cfg.Log.Format, a.level)
	bi := readBuildInfo()
	a.log.Info("corral starting", "version", bi.Version, "commit", bi.Commit, "config", cfg.File, "plugins", cfg.Plugins.Dir)
	for _, d := range cfg.Deprecations() {
		a.log.Warn(d)
	}
	var err error
	if cfg, err = a.bindSources(ctx, cfg); err != nil {
		return nil, err
	}
	a.cfg.Store(cfg)

	a.metrics = metrics.New(metrics.Options{Build: metrics.BuildInfo{Version: bi.Version, Commit: bi.Commit}, PluginHistograms: cfg.Metrics.PluginHistograms})
	if cfg.Trace.Exporter != "" {
		a.parts = append(a.parts, &tracing{cfg: cfg.Trace, version: bi.Version, reg: a.metrics.Registry(), log: a.log})
		a.log.Info("tracing", "exporter", cfg.Trace.Exporter, "endpoint", cfg.Trace.Endpoint, "sampleRatio", cfg.Trace.SampleRatio, "names", cfg.Trace.Names)
	}
	// The notification hub: plugin notify calls, plugin-set swaps and file
	// watchers in; listen streams and sessions out. A resource update
	// reaches only those the policy lets see the resource.
	hubOpts := notify.Options{Visible: func(p abi.Principal, uri string) bool {
		return a.reg.Catalog().Current().URIVisible(p, uri)
	}}
	rtCfg := plugin.RuntimeConfig{
		CacheDir: cfg.Plugins.CacheDir, DataDir: cfg.Plugins.DataDir, Engine: cfg.Plugins.Engine,
		Logger: a.log, Compile: registry.CompileLimits(cfg.Plugins.Compile),
		WakeTimeout: cfg.Plugins.Compile.Timeout, // a wake-up is a compile
		// What a start or plugins going to sleep leave in the Go heap goes
		// back to the system a second after the last of them.
		ReleaseAfter: time.Second,
	}
	if cfg.Plugins.CacheDir != "" {
		rtCfg.MetaDir = filepath.Join(cfg.Plugins.CacheDir, "meta") // a restart describes unchanged files from it
	}
	if cfg.Cluster.Enabled() {
		a.provisionCluster(cfg, &hubOpts, &rtCfg)
	}
	a.tasks = a.newTasks(cfg.Tasks)
	rtCfg.Observer = observer{a.metrics, a.tasks}
	a.hub = notify.New(hubOpts)
	rtCfg.Notifier = a.hub
	if a.cluster != nil {
		if err := a.connectCluster(cfg); err != nil {
			a.stopParts()
			return nil, err
		}
	}
	a.rt, err = plugin.NewRuntime(ctx, rtCfg)
	if err != nil {
		a.stopParts()
		return nil, fmt.Errorf("plugin runtime: %w", err)
	}
	a.log.Info("plugin runtime", "engine", a.rt.DefaultEngine(), "engines", plugin.Engines())
	if err := a.provision(cfg); err != nil {
		a.closeRuntime()
		a.stopParts()
		return nil, err
	}
	return a, nil
}

// provisionCluster makes this replica one of a cluster: the NATS
// connection and the event bus are parts; the hub publishes its plugins'
// notify calls on the bus and resyncs its listeners whenever NATS comes
// (back); the plugins' kv stores are JetStream buckets. The connection is
// made once the hub exists (connectCluster).
func (a *App) provisionCluster(cfg *config.Config, hub *notify.Options, rt *plugin.RuntimeConfig) {
	a.cluster = cluster.NewConn(cluster.Options{Cluster: cfg.Cluster, Logger: a.log, OnConnect: func() { a.hub.Resync() }})
	bus := cluster.NewBus(a.cluster, func(m notify.Message) bool { return a.hub.Receive(m) })
	hub.Bus = bus
	hub.Generation = func() string { return a.reg.Catalog().Current().Generation() }
	rt.OpenStore = a.cluster.OpenStore
	a.parts = append(a.parts, a.cluster, bus)
	a.metrics.Cluster(func() metrics.ClusterStats {
		st, bs := a.cluster.Status(), bus.Stats()
		return metrics.ClusterStats{Connected: st.Connected, Reconnects: st.Reconnects,
			Sent: bs.Sent, Received: bs.Received, Dropped: bs.Dropped}
	})
	a.log.Info("cluster replica", "cluster", cfg.Cluster.Name, "replica", cfg.Cluster.Replica, "nats", cfg.Cluster.NATS)
}

// connectCluster connects to NATS and, in bucket mode (cluster.plugins),
// makes the directory the registry serves: the mirror of the cluster's
// plugin bucket, a fresh one per process (the bucket is the source).
func (a *App) connectCluster(cfg *config.Config) error {
	if err := a.cluster.Connect(); err != nil {
		return err
	}
	if !cfg.Cluster.Plugins {
		return nil
	}
	dir, err := os.MkdirTemp("", "corral-plugins-"+cfg.Cluster.Replica+"-")
	if err != nil {
		return fmt.Errorf("cluster: plugin mirror: %w", err)
	}
	a.pluginDir = dir
	a.parts = append(a.parts, cluster.NewMirror(a.cluster, dir))
	a.log.Info("plugins from the cluster's bucket", "bucket", cfg.Cluster.Name+"-plugins", "mirror", dir)
	return nil
}

// clusterSessions puts the 2025-11-25 sessions of a cluster replica in the
// cluster: their records in the shared store, and the clients' answers to
// the input bridge forwarded to the replica that waits for them.
func (a *App) clusterSessions(cfg *config.Config, hopts *transport.HTTPOptions, mopts *mcp.Options) {
	sessions := cluster.NewSessionStore(a.cluster.JetStream(), cluster.SessionOptions{Name: cfg.Cluster.Name,
		MaxSessions: cfg.HTTP.MaxSessions, MaxSessionsPerClient: cfg.HTTP.MaxSessionsPerClient, Logger: a.log})
	answers := cluster.NewAnswers(a.cluster.NATS(), cfg.Cluster.Name, cfg.Cluster.Replica)
	hopts.Sessions, hopts.Answers = sessions, answers
	mopts.ReplicaTag = answers.Tag()
	a.parts = append(a.parts,
		partFuncs{"cluster sessions", nil, func(context.Context) error { sessions.Close(); return nil }},
		partFuncs{"cluster answers",
			func(context.Context) error { return answers.Serve(a.httpH.DeliverAnswer) },
			func(context.Context) error { return answers.Close() }})
}

// partFuncs is a Part from two functions (nil: nothing to do).
type partFuncs struct {
	name        string
	start, stop func(context.Context) error
}

func (p partFuncs) Name() string { return p.name }

func (p partFuncs) Start(ctx context.Context) error {
	if p.start == nil {
		return nil
	}
	return p.start(ctx)
}

func (p partFuncs) Stop(ctx context.Context) error {
	if p.stop == nil {
		return nil
	}
	return p.stop(ctx)
}

var _ Part = partFuncs{}

// status is the operator status (/status): the registry's, and the
// cluster connection's in cluster mode.
type status struct {
	registry.Status
	Cluster *cluster.Status `json:"cluster,omitempty"`
}

func (a *App) status() any {
	st := status{Status: a.reg.Status()}
	if a.cluster != nil {
		cs := a.cluster.Status()
		st.Cluster = &cs
	}
	return st
}

// provision builds the core above the plugin runtime.
func (a *App) provision(cfg *config.Config) error {
	var err error
	if a.sec, err = buildSecurity(cfg, a.log); err != nil {
		return err
	}
	// Host-side watchers on the roots granted to file:// plugins.
	if a.files, err = notify.NewFileWatcher(a.hub, a.log); err != nil {
		return err
	}
	// One key ring seals every token the server hands out (cursors,
	// requestState); a reload updates it in place.
	if a.ring, err = keys.New(cfg.Keys.Bytes()); err != nil {
		return err
	}
	a.reg, err = registry.New(registry.Options{
		Dir: a.pluginDir, Loader: registry.WasmLoader(a.rt), Config: cfg,
		SetOptions: catalog.Options{PageSize: cfg.Catalog.PageSize, Keys: a.ring,
			Policy: a.sec.policy, Authenticated: a.sec.authed,
			ListBudget: cfg.Catalog.ListBudget, Pages: pageCache(cfg.Catalog.ListCacheBytes),
			Logger: a.log, ListSkipped: a.metrics.ListSkipped},
		Debounce: cfg.Plugins.Debounce, Rescan: rescan(cfg.Plugins.Rescan),
		CompileWorkers: cfg.Plugins.Compile.Workers, CompileTimeout: cfg.Plugins.Compile.Timeout,
		DigestFile: digestFile(cfg.Plugins.CacheDir),
		Logger:     a.log, Observer: a.metrics,
		OnChange: func(ev registry.Event) {
			a.log.Info("plugin lists changed", "generation", ev.Generation,
				"resources", ev.Resources, "prompts", ev.Prompts, "tools", ev.Tools)
			a.hub.ListsChanged(ev.Resources, ev.Prompts, ev.Tools)
			failUnloaded(a.tasks, ev.Removed)
			a.files.SetRoots(fileRoots(a.reg.Catalog().Current(), a.cfg.Load()))
		},
	})
	if err != nil {
		return err
	}
	a.metrics.Generation(func() string { return a.reg.Catalog().Current().Generation() })
	a.health = metrics.NewHealth(func() error {
		if a.pluginDir != "" || cfg.HasSources() {
			return a.reg.NotReady()
		}
		return nil
	})
	if a.tls, err = a.loadTLS(cfg); err != nil {
		return err
	}
	auditRecord, err := a.openAudit(cfg)
	if err != nil {
		return err
	}
	mopts := mcp.Options{Name: "corral", Version: readBuildInfo().Version, Logger: a.log, TraceNames: cfg.Trace.Names,
		AllowCompletion: a.sec.limiter.Allow, Hub: a.hub, Audit: auditRecord, Tasks: a.tasks}

	// Streamable HTTP at /mcp. Its handler exists without the listener too:
	// WebSocket listen streams and requests count against its per-client
	// bounds.
	origins := originHosts(cfg.HTTP.AllowedOrigins)
	hopts := transport.HTTPOptions{
		AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: origins,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, MaxListensPerClient: cfg.HTTP.MaxListensPerClient,
		MaxSessions: cfg.HTTP.MaxSessions, MaxSessionsPerClient: cfg.HTTP.MaxSessionsPerClient,
		ReadBodyTimeout:           cfg.HTTP.ReadBodyTimeout,
		MaxConcurrentPerPrincipal: cfg.HTTP.MaxConcurrentPerPrincipal,
		MaxConcurrentPerAddress:   cfg.HTTP.MaxConcurrentPerAddress,
		Proxies:                   transport.TrustedProxies{Prefixes: cfg.HTTP.TrustedProxyPrefixes(), Header: cfg.HTTP.ForwardedHeader},
		Logger:                    a.log, PrincipalFunc: auth.PrincipalOf, Keys: a.ring,
	}
	if a.cluster != nil {
		a.clusterSessions(cfg, &hopts, &mopts)
	}
	a.srv = mcp.NewServer(a.reg.Catalog(), mopts)
	a.httpH = transport.NewHTTPHandler(a.srv, hopts)
	// WebSocket at /ws: on the HTTP listener, and on --ws ADDR if set.
	a.wsH = transport.NewWSHandler(a.srv, transport.WSOptions{
		AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: origins,
		Logger: a.log, PrincipalFunc: auth.PrincipalOf, ListenBound: a.httpH.ListenBound,
		RequestBound: a.httpH.RequestBound,
	})
	if cfg.File != "" {
		a.watcher = config.NewWatcher(a.src, cfg, config.WatchOptions{Logger: a.log, OnReload: a.reload})
	}
	return nil
}

// reload applies a configuration file that loaded and validated.
func (a *App) reload(_, n *config.Config) {
	a.level.Set(parseLevel(n.Log.Level))
	if err := a.ring.Update(n.Keys.Bytes()); err != nil {
		a.log.Error("keys not reloaded; keeping the running secrets", "err", err)
	}
	n, err := a.bindSources(context.Background(), n)
	if err != nil {
		a.log.Error("plugin sources not reloaded", "err", err)
	}
	a.cfg.Store(n)
	a.reg.UpdateConfig(n)
	a.files.SetRoots(fileRoots(a.reg.Catalog().Current(), n))
}

// Start starts the parts, opens the listeners (so that a bad address fails
// before plugins are compiled), loads the plugins and starts watching them,
// their file roots and the configuration file. fail is called if a
// listener dies later. After an error the caller still calls Stop.
func (a *App) Start(ctx context.Context, fail func()) error {
	for _, p := range a.parts {
		if err := p.Start(ctx); err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
		a.started = append(a.started, p)
	}
	cfg := a.cfg.Load()
	guard := transport.HostGuard{AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: originHosts(cfg.HTTP.AllowedOrigins), Logger: a.log}
	ops := operatorRoutes(a.metrics, a.status, consoleHandler(a.metrics, a.reg, a.sec.console, a.log), a.log)
	if cfg.WS.Addr != "" {
		mux := http.NewServeMux()
		mux.Handle("/ws", guard.Wrap(a.sec.authn.Middleware(a.wsH)))
		if err := a.listen(cfg.WS.Addr, mux, fail); err != nil {
			return err
		}
	}
	if cfg.HTTP.Addr != "" {
		a.metrics.Sessions(func() (int, int64, int64) {
			st := a.httpH.SessionStats()
			return st.Open, st.Evicted, st.Refused
		})
		a.metrics.Admission(func() (int64, int64) {
			st := a.httpH.AdmissionStats()
			return st.Concurrency, st.BodyTimeout
		})
		if err := a.listen(cfg.HTTP.Addr, mcpRoutes(guard, a.sec.authn, a.httpH, a.wsH, ops, a.health), fail); err != nil {
			return err
		}
	}
	if cfg.Admin.Addr != "" {
		if err := a.listen(cfg.Admin.Addr, adminRoutes(guard, ops, a.health), fail); err != nil {
			return err
		}
	}

	if a.pluginDir != "" || cfg.HasSources() {
		if err := a.reg.Load(ctx, 10*time.Second); err != nil {
			a.log.Error("plugin directory", "err", err)
		}
		st := a.reg.Status()
		a.log.Info("plugins loaded", "serving", len(a.reg.Catalog().Current().Providers()), "failed", len(st.Failed()),
			"generation", st.Generation)
	}
	if a.mcpURL != "" {
		// One plain line for the person who ran `make run`: where to connect.
		fmt.Fprintf(a.out, "corral: serving %d plugins; connect an MCP client (Streamable HTTP) to %s\n",
			len(a.reg.Catalog().Current().Providers()), a.mcpURL)
	}
	bgCtx, stop := context.WithCancel(ctx)
	a.stopBG = stop
	if a.pluginDir != "" || cfg.HasSources() {
		a.goRun(bgCtx, a.reg.Run)
	}
	a.files.SetRoots(fileRoots(a.reg.Catalog().Current(), cfg))
	a.goRun(bgCtx, a.files.Run)
	if a.watcher != nil {
		a.goRun(bgCtx, a.watcher.Run)
	}
	return nil
}

// goRun runs f(ctx) in the background until Stop. The loops it runs end
// only when ctx does, which their error says.
func (a *App) goRun(ctx context.Context, f func(context.Context) error) {
	a.bg.Add(1)
	go func() { defer a.bg.Done(); _ = f(ctx) }()
}

// listen serves h on addr; fail is called if serving fails later.
func (a *App) listen(addr string, h http.Handler, fail func()) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return listenError(addr, err)
	}
	scheme := "http"
	if a.tls != nil {
		scheme = "https"
	}
	if addr == a.cfg.Load().HTTP.Addr {
		a.mcpURL = scheme + "://" + ln.Addr().String() + "/mcp"
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: a.cfg.Load().HTTP.ReadHeaderTimeout, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		TLSConfig: a.tls}
	a.servers = append(a.servers, hs)
	go func() {
		serve := hs.Serve
		if a.tls != nil {
			serve = func(ln net.Listener) error { return hs.ServeTLS(ln, "", "") }
		}
		if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server failed", "addr", addr, "err", err)
			fail()
		}
	}()
	a.log.Info("listening", "addr", ln.Addr().String(), "scheme", scheme)
	return nil
}

// Serve serves until ctx is done: on stdin and stdout when no listener is
// configured (then also until stdin closes), on the listeners otherwise.
func (a *App) Serve(ctx context.Context, stdin io.Reader, stdout io.Writer) {
	cfg := a.cfg.Load()
	if cfg.HTTP.Addr != "" || cfg.WS.Addr != "" {
		<-ctx.Done()
		return
	}
	err := transport.ServeStdio(ctx, a.srv, stdin, stdout, transport.StdioOptions{Logger: a.log, Principal: a.sec.stdio})
	if err != nil && !errors.Is(err, context.Canceled) {
		a.log.Error("stdio", "err", err)
	}
	a.log.Info("stdio closed; shutting down")
}

// Stop shuts down gracefully: not ready and no more keep-alives, then
// http.drainDelay of serving on (a balancer's time to notice), then within
// shutdownTimeout listen streams ended, no new connections, requests
// finished, background work stopped, unfinished tasks failed, plugins
// closed, and the parts stopped in reverse order. It is safe after a Start that failed part way.
func (a *App) Stop() {
	a.health.SetDraining()
	for _, hs := range a.servers {
		hs.SetKeepAlivesEnabled(false)
	}
	if d := a.cfg.Load().HTTP.DrainDelay; d > 0 && len(a.servers) > 0 {
		a.log.Info("draining", "for", d.String())
		time.Sleep(d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	a.hub.Close() // listen streams end gracefully, sessions' streams stop
	a.wsH.Close()
	a.httpH.Close()
	for _, hs := range a.servers {
		if err := hs.Shutdown(ctx); err != nil {
			a.log.Warn("http shutdown", "err", err)
		}
	}
	if a.stopBG != nil {
		a.stopBG()
	}
	a.bg.Wait()
	// Unfinished tasks end now, stored failed (in a cluster, for the other
	// replicas to answer), rather than hold the plugins' close.
	a.tasks.Stop(ctx, "The server stopped before the task finished.")
	if err := a.reg.Close(ctx); err != nil {
		a.log.Warn("closing plugins", "err", err)
	}
	a.closeRuntime()
	a.stopParts()
	a.log.Info("corral stopped")
}

// stopParts stops, in reverse order, the parts Start started, and the
// cluster connection, which exists from newApp on.
func (a *App) stopParts() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	stopped := false
	for _, p := range slices.Backward(a.started) {
		if err := p.Stop(ctx); err != nil {
			a.log.Warn("stopping", "part", p.Name(), "err", err)
		}
		stopped = stopped || p == Part(a.cluster)
	}
	if a.cluster != nil && !stopped {
		_ = a.cluster.Stop(ctx)
	}
	if a.pluginDir != "" && a.pluginDir != a.cfg.Load().Plugins.Dir {
		_ = os.RemoveAll(a.pluginDir) // the bucket's mirror
	}
}

func (a *App) closeRuntime() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	a.rt.Close(ctx)
}

// pageCache is the list fallback's cache of n bytes, nil for 0 (none).
func pageCache(n int) *catalog.PageCache {
	if n == 0 {
		return nil
	}
	return catalog.NewPageCache(n)
}

// observer adapts metrics to the plugin runtime's Observer; a quarantine
// also fails the plugin's unfinished tasks.
type observer struct {
	m     *metrics.Metrics
	tasks *tasks.Manager
}

func (o observer) Call(p, op string, d time.Duration, c plugin.ErrorClass) {
	o.m.Call(p, op, d, string(c))
}
func (o observer) Instance(p string, created bool, reason string) { o.m.Instance(p, created, reason) }
func (o observer) Quarantine(p string, on bool) {
	o.m.Quarantine(p, on)
	if on {
		o.tasks.Fail(p, "The plugin "+p+" was quarantined after repeated failures.")
	}
}
func (o observer) Denied(p, capability, reason string) { o.m.Denied(p, capability, reason) }
func (o observer) Rejected(p, op string)               { o.m.Rejected(p, op) }

var _ plugin.Observer = observer{}

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

// digestFile is where the registry records the plugin files' digests (a
// restart over unchanged files then reads none of them): beside the
// compilation cache, none without one.
func digestFile(cacheDir string) string {
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, "digests.json")
}
