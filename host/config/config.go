package config

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"
)

// Config is corral's whole configuration. A Config is built and validated by
// [Load] and must not be modified afterwards: share it by pointer and build a
// new one to change anything.
type Config struct {
	// File is the absolute path of the configuration file, "" when none.
	File string
	// Dir is the directory relative paths in File were resolved against.
	Dir string

	HTTP    HTTP      `koanf:"http"`
	WS      Listen    `koanf:"ws"`
	Admin   Listen    `koanf:"admin"`
	Log     Log       `koanf:"log"`
	Catalog Catalog   `koanf:"catalog"`
	Keys    Secrets   `koanf:"keys"`
	Plugins Plugins   `koanf:"plugins"`
	Auth    Auth      `koanf:"auth"`
	Audit   Audit     `koanf:"audit"`
	TLS     ServerTLS `koanf:"tls"`
	// Policy decides what each principal sees; empty shows everything to
	// everyone.
	Policy []PolicyRule `koanf:"policy"`
	// Plugin holds per-plugin settings keyed by manifest name. A plugin
	// with no entry runs with DefaultPlugin: enabled, no grants.
	Plugin map[string]Plugin `koanf:"plugin"`
	// Cluster joins this replica to a cluster of replicas through NATS.
	Cluster Cluster `koanf:"cluster"`
	// Trace exports OpenTelemetry traces; off by default.
	Trace Trace `koanf:"trace"`
	// Tasks bounds tool calls run as tasks.
	Tasks Tasks `koanf:"tasks"`
	// Metrics bounds the Prometheus series kept per plugin.
	Metrics Metrics `koanf:"metrics"`

	// origins says where each value came from, for Errorf; nil for a
	// Config not made by Load.
	origins *origins
}

// HTTP configures the Streamable HTTP listener.
type HTTP struct {
	// Addr is host:port to listen on; "" disables HTTP (stdio is served
	// when neither HTTP nor WebSocket is enabled).
	Addr string `koanf:"addr"`
	// AllowedOrigins are the Origin header values accepted besides the
	// loopback defaults of the transport.
	AllowedOrigins []string `koanf:"allowedOrigins"`
	// AllowedHosts are the Host header values accepted besides the
	// loopback defaults of the transport.
	AllowedHosts []string `koanf:"allowedHosts"`
	// MaxBodyBytes caps the size of one request body.
	MaxBodyBytes int64 `koanf:"maxBodyBytes"`
	// ReadHeaderTimeout bounds the time a request's headers take to
	// arrive, on every listener; ReadBodyTimeout the time a POST body to
	// /mcp takes.
	ReadHeaderTimeout time.Duration `koanf:"readHeaderTimeout"`
	ReadBodyTimeout   time.Duration `koanf:"readBodyTimeout"`
	// DrainDelay is how long a shutdown keeps serving after /readyz turns
	// 503 and keep-alives stop, so that a balancer sees the replica leave
	// before its listener closes; 0 closes at once.
	DrainDelay time.Duration `koanf:"drainDelay"`
	// MaxConcurrentPerPrincipal bounds the requests in progress of one
	// principal with credentials, MaxConcurrentPerAddress those of one
	// client address without.
	MaxConcurrentPerPrincipal int `koanf:"maxConcurrentPerPrincipal"`
	MaxConcurrentPerAddress   int `koanf:"maxConcurrentPerAddress"`
	// TrustedProxies are the CIDR prefixes (or single addresses) of the
	// reverse proxies whose forwarding header names the client address;
	// empty trusts none and the client address is the TCP peer.
	TrustedProxies []string `koanf:"trustedProxies"`
	// ForwardedHeader is the header trusted proxies write the client
	// address in: "X-Forwarded-For" or "Forwarded" (RFC 7239).
	ForwardedHeader string `koanf:"forwardedHeader"`
	// MaxListensPerClient bounds the subscriptions/listen streams one
	// client (a principal; an address for anonymous clients) has open over
	// Streamable HTTP.
	MaxListensPerClient int `koanf:"maxListensPerClient"`
	// MaxSessions caps the live legacy sessions; MaxSessionsPerClient
	// those of one principal (one address for anonymous clients).
	MaxSessions          int `koanf:"maxSessions"`
	MaxSessionsPerClient int `koanf:"maxSessionsPerClient"`
}

// TrustedProxyPrefixes returns TrustedProxies parsed; validation
// guarantees every entry parses.
func (h HTTP) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range h.TrustedProxies {
		if p, err := parseProxy(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// parseProxy parses a CIDR prefix ("10.0.0.0/8", "fd00::/8") or a single
// address ("192.0.2.7", a /32 or /128) into a masked prefix; an IPv4-mapped
// IPv6 address becomes IPv4.
func parseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("config: want a CIDR prefix or an IP address, got %q", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Listen is a listener that has only an address.
type Listen struct {
	Addr string `koanf:"addr"` // host:port; "" disables the listener
}

// Log configures the server's own logs (always on stderr).
type Log struct {
	Level  string `koanf:"level"`  // debug, info, warn or error
	Format string `koanf:"format"` // auto (text on a terminal, else JSON), text or json
}

// Catalog configures list pagination.
type Catalog struct {
	PageSize int `koanf:"pageSize"`
	// CursorKey is deprecated: a hex secret that serves as keys.secret
	// when that is unset (see Keys).
	CursorKey string `koanf:"cursorKey"`
	// ListBudget bounds each plugin's share of one resources/list: a page
	// not answered within it is left out (or its last good page served).
	ListBudget time.Duration `koanf:"listBudget"`
	// ListCacheBytes bounds the last good pages kept per plugin and
	// principal for that fallback; 0 keeps none.
	ListCacheBytes int `koanf:"listCacheBytes"`
}

// Plugins configures the plugin directory and where plugins keep state.
type Plugins struct {
	// Dir is the directory whose *.wasm files are served; "" serves none.
	Dir string `koanf:"dir"`
	// DataDir holds per-plugin key-value stores; "" keeps them in memory.
	DataDir string `koanf:"dataDir"`
	// CacheDir holds the compilation cache; "" disables it.
	CacheDir string `koanf:"cacheDir"`
	// Engine runs every plugin whose entry names none: EngineWazero (the
	// default) or EngineWasmtime.
	Engine string `koanf:"engine"`
	// Debounce is how long a changed file must stay unchanged before it is
	// loaded.
	Debounce time.Duration `koanf:"debounce"`
	// Rescan is the period of the safety-net directory rescan.
	Rescan time.Duration `koanf:"rescan"`
	// Compile bounds plugin files before and while they are compiled.
	Compile Compile `koanf:"compile"`
	// Trust is the signature policy of every plugin whose entry sets none
	// (docs/distribution.md); the zero Trust checks no signature.
	Trust Trust `koanf:"trust"`
	// Store is the directory pulled plugins are kept in, by digest.
	Store string `koanf:"store"`
	// Lock, when set, is a plugin lock file (corral plugin lock): exactly
	// the plugins it names are served, from their pinned sources; Dir is
	// not read.
	Lock string `koanf:"lock"`
	// OCI configures registry access.
	OCI OCI `koanf:"oci"`
	// Limits are the limits of every plugin, key by key, where its entry
	// (plugin.<name>.limits) sets none: one setting for a fleet instead
	// of an entry per plugin.
	Limits Limits `koanf:"limits"`
}

// Compile bounds what one plugin file may cost to compile. A zero value
// takes corral's default (docs/configuration.md): the structural limits
// are plugin.DefaultCompileLimits, sized from the bundled guests.
type Compile struct {
	MaxFileBytes     int    `koanf:"maxFileBytes"`     // the whole file
	MaxFunctions     int    `koanf:"maxFunctions"`     // function bodies
	MaxFunctionBytes int    `koanf:"maxFunctionBytes"` // one function body
	MaxNesting       int    `koanf:"maxNesting"`       // blocks nested in one function
	MaxLocals        uint64 `koanf:"maxLocals"`        // locals of one function
	// Timeout is the wall-clock budget of one compile: a compile still
	// running then is abandoned and the file refused.
	Timeout time.Duration `koanf:"timeout"`
	// Workers is how many compiles run at once (0: one per CPU).
	Workers int `koanf:"workers"`
}

// Plugin is the operator's settings for one plugin, by manifest name.
type Plugin struct {
	// Enabled false keeps the plugin out of the served set.
	Enabled bool `koanf:"enabled"`
	// Binding selects the file allowed to run under this name (file,
	// sha256); the zero Binding lets the unique file declaring the name run.
	Binding `koanf:",squash"`
	// Engine runs the plugin: EngineWazero or EngineWasmtime; "" runs it
	// with Plugins.Engine.
	Engine string `koanf:"engine"`
	Grants Grants `koanf:"grants"`
	Limits Limits `koanf:"limits"`
	// Trust, when set, is the plugin's signature policy in place of
	// Plugins.Trust.
	Trust Trust `koanf:"trust"`
	// FollowTag makes a source given by tag follow the tag: it is
	// resolved again on every start and reload (else the digest recorded
	// the first time stays).
	FollowTag bool `koanf:"followTag"`
}

// Grants are the capabilities the operator gives a plugin. A capability is
// usable only when the plugin's manifest requests it too.
type Grants struct {
	Log    bool `koanf:"log"`
	Notify bool `koanf:"notify"`
	KV     bool `koanf:"kv"`
	// KVQuota caps the bytes of keys plus values the plugin may store.
	KVQuota int64 `koanf:"kvQuota"`
	// Files are the read-only roots (absolute after loading).
	Files []string  `koanf:"files"`
	HTTP  HTTPGrant `koanf:"http"`
	// Config are values the plugin reads with config_get.
	Config map[string]string `koanf:"config"`
	// Secret names the Config values that came from an environment
	// variable or a file ({env: NAME}, {file: PATH}) and where from
	// ("env NAME", "file PATH"): show them only through Redact.
	Secret map[string]string `koanf:"-"`
}

// HTTPGrant lets a plugin fetch from some hosts.
type HTTPGrant struct {
	Hosts []string `koanf:"hosts"` // host or host:port; "*.example.com" matches subdomains
	// AllowPrivate permits loopback, private and link-local addresses.
	AllowPrivate bool `koanf:"allowPrivate"`
}

// Limits bound what one plugin may consume.
type Limits struct {
	Timeout     time.Duration `koanf:"timeout"`     // wall clock per call
	MemoryPages uint32        `koanf:"memoryPages"` // 64 KiB pages per instance
	Instances   int           `koanf:"instances"`   // most instances (concurrent calls)
	IdleTimeout time.Duration `koanf:"idleTimeout"` // close instances idle that long, down to one; 0 never
	// SleepAfter puts a plugin nobody called for that long to sleep: no
	// instance and no compiled code, only its metadata; its next call
	// wakes it. 0 keeps it hot.
	SleepAfter       time.Duration `koanf:"sleepAfter"`
	MaxRequestBytes  int           `koanf:"maxRequestBytes"`  // one request payload
	MaxResponseBytes int           `koanf:"maxResponseBytes"` // one response payload
	// QuarantineAfter is how many consecutive failures quarantine the
	// plugin until it is reloaded; 0 never quarantines.
	QuarantineAfter int `koanf:"quarantineAfter"`
	// HTTPMaxHeaders and HTTPMaxHeaderBytes cap the header lines of one
	// http_fetch response and the bytes of their names and values.
	HTTPMaxHeaders     int `koanf:"httpMaxHeaders"`
	HTTPMaxHeaderBytes int `koanf:"httpMaxHeaderBytes"`
}

// Engines that can run a plugin. EngineWasmtime exists only in binaries
// built with -tags wasmtime; Load accepts both names and the server
// refuses to start with an engine its binary lacks.
const (
	EngineWazero   = "wazero"
	EngineWasmtime = "wasmtime"
)

// engines are the names Load accepts.
var engines = []string{EngineWazero, EngineWasmtime}

// Defaults for a plugin with no configuration entry, and for the keys an
// entry leaves out.
var defaultLimits = Limits{
	Timeout:          5 * time.Second,
	MemoryPages:      256,
	Instances:        4,
	IdleTimeout:      time.Minute,
	SleepAfter:       5 * time.Minute,
	MaxRequestBytes:  1 << 20,
	MaxResponseBytes: 8 << 20,
	QuarantineAfter:  5,

	HTTPMaxHeaders:     100,
	HTTPMaxHeaderBytes: 32 << 10,
}

// DefaultPlugin returns the settings of a plugin with no configuration
// entry under the built-in defaults: enabled, run by the server's engine
// (plugins.engine), with the default limits and no grants.
// Config.PluginSettings gives plugins.limits in place of those limits.
func DefaultPlugin() Plugin {
	return Plugin{Enabled: true, Grants: Grants{KVQuota: defaultKVQuota}, Limits: defaultLimits}
}

// PluginSettings returns the settings for the plugin named name: its entry,
// or, when it has none, DefaultPlugin with the limits of plugins.limits.
func (c *Config) PluginSettings(name string) Plugin {
	if p, ok := c.Plugin[name]; ok {
		return p
	}
	return c.defaultPlugin()
}

// defaultPlugin returns the settings of a plugin with no entry. A Config
// not made by Load has zero Plugins.Limits (which no file can set: a zero
// limits.timeout is refused) and gives the built-in limits.
func (c *Config) defaultPlugin() Plugin {
	p := DefaultPlugin()
	if c.Plugins.Limits != (Limits{}) {
		p.Limits = c.Plugins.Limits
	}
	return p
}

// Equal reports whether two plugin settings are the same.
func (p Plugin) Equal(q Plugin) bool { return reflect.DeepEqual(p, q) }

// defaults returns the built-in values as a koanf map.
func defaults() map[string]any {
	m := map[string]any{
		"tasks.deadline": tasksDefaults["tasks.deadline"], "tasks.keep": tasksDefaults["tasks.keep"],
		"tasks.pollInterval": tasksDefaults["tasks.pollInterval"], "tasks.maxPerPrincipal": tasksDefaults["tasks.maxPerPrincipal"],
		"tasks.maxPerPlugin":             tasksDefaults["tasks.maxPerPlugin"],
		"http.addr":                      "",
		"http.maxBodyBytes":              int64(4 << 20),
		"http.forwardedHeader":           "X-Forwarded-For",
		"http.readHeaderTimeout":         "10s",
		"http.readBodyTimeout":           "30s",
		"http.drainDelay":                "0s",
		"http.maxConcurrentPerPrincipal": 256,
		"http.maxConcurrentPerAddress":   256,
		"ws.addr":                        "",
		"admin.addr":                     "",
		"log.level":                      "info",
		"log.format":                     "auto",
		"catalog.pageSize":               100,
		"catalog.cursorKey":              "",
		"catalog.listBudget":             "500ms",
		"catalog.listCacheBytes":         4 << 20,
		"plugins.dir":                    "",
		"plugins.dataDir":                "",
		"plugins.cacheDir":               defaultCacheDir(),
		"plugins.engine":                 EngineWazero,
		"plugins.debounce":               "250ms",
		"plugins.rescan":                 "30s",
		"plugins.store":                  defaultStoreDir(),
		"plugins.lock":                   "",
		"plugins.oci.dockerConfig":       defaultDockerConfig(),

		"plugins.compile.maxFileBytes":     0,
		"plugins.compile.maxFunctions":     0,
		"plugins.compile.maxFunctionBytes": 0,
		"plugins.compile.maxNesting":       0,
		"plugins.compile.maxLocals":        0,
		"plugins.compile.timeout":          "0s",
		"plugins.compile.workers":          0,

		"http.maxListensPerClient":  1024,
		"http.maxSessions":          1024,
		"http.maxSessionsPerClient": 64,
	}
	for key, v := range limitDefaults() {
		m["plugins.limits."+key] = v
	}
	authDefaults(m)
	keysDefaults(m)
	clusterDefaults(m)
	traceDefaults(m)
	metricsDefaults(m)
	return m
}

// defaultCacheDir is the compilation cache used when the operator sets
// none: corral/ under the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache), so restarts skip recompilation out of the box. An explicit
// empty value disables the cache.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "corral")
}

// limitDefaults returns the built-in limits as a koanf map below
// "limits." (of plugins.limits and of every plugin entry).
func limitDefaults() map[string]any {
	return map[string]any{
		"timeout":          defaultLimits.Timeout.String(),
		"memoryPages":      defaultLimits.MemoryPages,
		"instances":        defaultLimits.Instances,
		"idleTimeout":      defaultLimits.IdleTimeout.String(),
		"sleepAfter":       defaultLimits.SleepAfter.String(),
		"maxRequestBytes":  defaultLimits.MaxRequestBytes,
		"maxResponseBytes": defaultLimits.MaxResponseBytes,
		"quarantineAfter":  defaultLimits.QuarantineAfter,

		"httpMaxHeaders":     defaultLimits.HTTPMaxHeaders,
		"httpMaxHeaderBytes": defaultLimits.HTTPMaxHeaderBytes,
	}
}

const (
	defaultPluginEnabled = true
	defaultKVQuota       = int64(1 << 20)
)

// RestartKeys returns the keys whose values differ between old and new and
// that only take effect after a restart.
func RestartKeys(old, new *Config) []string {
	var keys []string
	add := func(key string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			keys = append(keys, key)
		}
	}
	add("http.addr", old.HTTP.Addr, new.HTTP.Addr)
	add("http.allowedOrigins", old.HTTP.AllowedOrigins, new.HTTP.AllowedOrigins)
	add("http.allowedHosts", old.HTTP.AllowedHosts, new.HTTP.AllowedHosts)
	add("http.maxBodyBytes", old.HTTP.MaxBodyBytes, new.HTTP.MaxBodyBytes)
	add("http.trustedProxies", old.HTTP.TrustedProxies, new.HTTP.TrustedProxies)
	add("http.forwardedHeader", old.HTTP.ForwardedHeader, new.HTTP.ForwardedHeader)
	add("http.readHeaderTimeout", old.HTTP.ReadHeaderTimeout, new.HTTP.ReadHeaderTimeout)
	add("http.readBodyTimeout", old.HTTP.ReadBodyTimeout, new.HTTP.ReadBodyTimeout)
	add("http.maxConcurrentPerPrincipal", old.HTTP.MaxConcurrentPerPrincipal, new.HTTP.MaxConcurrentPerPrincipal)
	add("http.maxConcurrentPerAddress", old.HTTP.MaxConcurrentPerAddress, new.HTTP.MaxConcurrentPerAddress)
	add("http.maxListensPerClient", old.HTTP.MaxListensPerClient, new.HTTP.MaxListensPerClient)
	add("http.maxSessions", old.HTTP.MaxSessions, new.HTTP.MaxSessions)
	add("http.maxSessionsPerClient", old.HTTP.MaxSessionsPerClient, new.HTTP.MaxSessionsPerClient)
	add("ws.addr", old.WS.Addr, new.WS.Addr)
	add("admin.addr", old.Admin.Addr, new.Admin.Addr)
	add("log.format", old.Log.Format, new.Log.Format)
	add("catalog.pageSize", old.Catalog.PageSize, new.Catalog.PageSize)
	add("catalog.listBudget", old.Catalog.ListBudget, new.Catalog.ListBudget)
	add("catalog.listCacheBytes", old.Catalog.ListCacheBytes, new.Catalog.ListCacheBytes)
	add("plugins.dir", old.Plugins.Dir, new.Plugins.Dir)
	add("plugins.dataDir", old.Plugins.DataDir, new.Plugins.DataDir)
	add("plugins.cacheDir", old.Plugins.CacheDir, new.Plugins.CacheDir)
	add("plugins.engine", old.Plugins.Engine, new.Plugins.Engine)
	add("plugins.debounce", old.Plugins.Debounce, new.Plugins.Debounce)
	add("plugins.rescan", old.Plugins.Rescan, new.Plugins.Rescan)
	add("plugins.compile", old.Plugins.Compile, new.Plugins.Compile)
	add("plugins.store", old.Plugins.Store, new.Plugins.Store)
	add("plugins.lock", old.Plugins.Lock, new.Plugins.Lock)
	add("plugins.oci", old.Plugins.OCI, new.Plugins.OCI)
	add("auth", old.Auth, new.Auth)
	add("policy", old.Policy, new.Policy)
	add("cluster", old.Cluster, new.Cluster)
	return keys
}

// ReloadKeys returns the keys whose values differ between old and new and
// that apply at once: log.level, plugins.limits and per-plugin settings
// (as "plugin.<name>").
func ReloadKeys(old, new *Config) []string {
	var keys []string
	if old.Log.Level != new.Log.Level {
		keys = append(keys, "log.level")
	}
	if !keysEqual(old.Keys, new.Keys) {
		keys = append(keys, "keys")
	}
	if !old.Plugins.Trust.Equal(new.Plugins.Trust) {
		keys = append(keys, "plugins.trust")
	}
	if old.Plugins.Limits != new.Plugins.Limits {
		keys = append(keys, "plugins.limits")
	}
	names := slices.Sorted(maps.Keys(old.Plugin))
	for _, n := range slices.Sorted(maps.Keys(new.Plugin)) {
		if _, ok := old.Plugin[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if !old.PluginSettings(n).Equal(new.PluginSettings(n)) {
			keys = append(keys, "plugin."+n)
		}
	}
	return keys
}

// applyReloadable returns a copy of old with new's reloadable values: the
// configuration actually in force after a reload.
func applyReloadable(old, new *Config) *Config {
	c := *old
	c.Log.Level = new.Log.Level
	c.Keys = new.Keys
	c.Catalog.CursorKey = new.Catalog.CursorKey // the deprecated alias of keys.secret
	c.Plugins.Trust = new.Plugins.Trust
	c.Plugins.Limits = new.Plugins.Limits
	c.Plugin = new.Plugin
	return &c
}

// String describes where the configuration came from, for logs.
func (c *Config) String() string {
	if c.File == "" {
		return "config(defaults, env, flags)"
	}
	return fmt.Sprintf("config(%s)", c.File)
}
