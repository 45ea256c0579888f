package config

import (
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type problem struct {
	key string
	msg string
}

// pluginName is the manifest name syntax (abi.Manifest.Name).
var pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// validate checks every value of cfg, normalizing a few (sha256 case), and
// returns the problems in key order.
func validate(cfg *Config) []problem {
	var ps []problem
	bad := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	checkAddr := func(key, addr string) {
		if addr == "" {
			return
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			bad(key, "want host:port, got %q", addr)
			return
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad(key, "bad port %q", port)
		}
		if strings.ContainsAny(host, "/ ") {
			bad(key, "bad host %q", host)
		}
	}
	checkAddr("http.addr", cfg.HTTP.Addr)
	checkAddr("ws.addr", cfg.WS.Addr)
	checkAddr("admin.addr", cfg.Admin.Addr)
	for _, o := range cfg.HTTP.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			bad("http.allowedOrigins", "want an origin like https://app.example.com, got %q", o)
		}
	}
	for _, h := range cfg.HTTP.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ @") {
			bad("http.allowedHosts", "want a host or host:port, got %q", h)
		}
	}
	if cfg.HTTP.MaxBodyBytes <= 0 {
		bad("http.maxBodyBytes", "must be positive, got %d", cfg.HTTP.MaxBodyBytes)
	}
	for _, p := range cfg.HTTP.TrustedProxies {
		if _, err := parseProxy(p); err != nil {
			bad("http.trustedProxies", "want a CIDR prefix (10.0.0.0/8) or an IP address, got %q", p)
		}
	}
	if d := cfg.HTTP.ReadHeaderTimeout; d < 100*time.Millisecond || d > 10*time.Minute {
		bad("http.readHeaderTimeout", "must be between 100ms and 10m, got %v", d)
	}
	if d := cfg.HTTP.ReadBodyTimeout; d < 100*time.Millisecond || d > time.Hour {
		bad("http.readBodyTimeout", "must be between 100ms and 1h, got %v", d)
	}
	if d := cfg.HTTP.DrainDelay; d < 0 || d > 5*time.Minute {
		bad("http.drainDelay", "must be between 0s and 5m, got %v", d)
	}
	if n := cfg.HTTP.MaxConcurrentPerPrincipal; n < 1 || n > 1<<20 {
		bad("http.maxConcurrentPerPrincipal", "must be between 1 and 1048576, got %d", n)
	}
	if n := cfg.HTTP.MaxConcurrentPerAddress; n < 1 || n > 1<<20 {
		bad("http.maxConcurrentPerAddress", "must be between 1 and 1048576, got %d", n)
	}
	switch cfg.HTTP.ForwardedHeader {
	case "X-Forwarded-For", "Forwarded":
	default:
		bad("http.forwardedHeader", "want X-Forwarded-For or Forwarded, got %q", cfg.HTTP.ForwardedHeader)
	}
	if cfg.HTTP.MaxListensPerClient <= 0 {
		bad("http.maxListensPerClient", "must be positive, got %d", cfg.HTTP.MaxListensPerClient)
	}
	if cfg.HTTP.MaxSessions <= 0 {
		bad("http.maxSessions", "must be positive, got %d", cfg.HTTP.MaxSessions)
	}
	if cfg.HTTP.MaxSessionsPerClient <= 0 || cfg.HTTP.MaxSessionsPerClient > cfg.HTTP.MaxSessions {
		bad("http.maxSessionsPerClient", "must be between 1 and http.maxSessions (%d), got %d", cfg.HTTP.MaxSessions, cfg.HTTP.MaxSessionsPerClient)
	}
	switch cfg.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "want debug, info, warn or error, got %q", cfg.Log.Level)
	}
	switch cfg.Log.Format {
	case "auto", "text", "json":
	default:
		bad("log.format", "want auto, text or json, got %q", cfg.Log.Format)
	}
	if cfg.Catalog.PageSize < 1 || cfg.Catalog.PageSize > 1000 {
		bad("catalog.pageSize", "must be between 1 and 1000, got %d", cfg.Catalog.PageSize)
	}
	if d := cfg.Catalog.ListBudget; d < 10*time.Millisecond || d > time.Minute {
		bad("catalog.listBudget", "must be between 10ms and 1m, got %v", d)
	}
	if n := cfg.Catalog.ListCacheBytes; n < 0 || n > 1<<30 {
		bad("catalog.listCacheBytes", "must be between 0 and 1 GiB, got %d", n)
	}
	validateKeys(cfg, bad)
	validateCluster(cfg, bad)
	validateTrace(cfg, bad)
	validateMetrics(cfg, bad)
	if d := cfg.Plugins.Debounce; d < 10*time.Millisecond || d > 10*time.Second {
		bad("plugins.debounce", "must be between 10ms and 10s, got %v", d)
	}
	if r := cfg.Plugins.Rescan; r != 0 && r < 100*time.Millisecond {
		bad("plugins.rescan", "must be 0 (off) or at least 100ms, got %v", r)
	}
	for key, v := range map[string]int{
		"maxFileBytes": cfg.Plugins.Compile.MaxFileBytes, "maxFunctions": cfg.Plugins.Compile.MaxFunctions,
		"maxFunctionBytes": cfg.Plugins.Compile.MaxFunctionBytes, "maxNesting": cfg.Plugins.Compile.MaxNesting,
		"workers": cfg.Plugins.Compile.Workers,
	} {
		if v < 0 {
			bad("plugins.compile."+key, "must not be negative (0 is the default), got %d", v)
		}
	}
	if d := cfg.Plugins.Compile.Timeout; d < 0 || (d > 0 && d < 100*time.Millisecond) {
		bad("plugins.compile.timeout", "must be 0 (the default) or at least 100ms, got %v", d)
	}
	if !slices.Contains(engines, cfg.Plugins.Engine) {
		bad("plugins.engine", "unknown engine %q (known: %s)", cfg.Plugins.Engine, strings.Join(engines, ", "))
	}
	if d := cfg.Plugins.Dir; d != "" {
		// A missing directory is fine (it may be created later); a file is not.
		if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
			bad("plugins.dir", "%s is not a directory", d)
		}
	}
	validateTrust("plugins.trust", cfg.Plugins.Trust, bad)
	validateLimits("plugins.limits.", cfg.Plugins.Limits, nil, bad)
	files := map[string]string{} // plugin.<name>.file → name
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugin)) {
		p := cfg.Plugin[name]
		pre := "plugin." + name + "."
		if !pluginName.MatchString(name) {
			bad("plugin."+name, "%q is not a plugin name ([a-z0-9][a-z0-9_-]{0,63})", name)
		}
		if p.SHA256 != "" {
			p.SHA256 = strings.ToLower(p.SHA256)
			if b, err := hex.DecodeString(p.SHA256); err != nil || len(b) != 32 {
				bad(pre+"sha256", "want 64 hex digits, got %q", p.SHA256)
			}
		}
		if f := p.File; f != "" {
			switch {
			case !strings.HasSuffix(f, ".wasm") || strings.HasPrefix(filepath.Base(f), "."):
				bad(pre+"file", "%s is not a file the plugin directory serves (*.wasm, not starting with .)", f)
			case cfg.Plugins.Dir != "" && filepath.Dir(f) != filepath.Clean(cfg.Plugins.Dir):
				bad(pre+"file", "%s is not in plugins.dir (%s)", f, cfg.Plugins.Dir)
			case files[f] != "":
				bad(pre+"file", "%s is already bound to plugin %s", f, files[f])
			}
			files[f] = name
		}
		validateTrust(pre+"trust", p.Trust, bad)
		validateSource(pre, p, bad)
		if p.Engine != "" && !slices.Contains(engines, p.Engine) {
			bad(pre+"engine", "unknown engine %q (known: %s)", p.Engine, strings.Join(engines, ", "))
		}
		g := p.Grants
		if g.KVQuota < 0 {
			bad(pre+"grants.kvQuota", "must not be negative, got %d", g.KVQuota)
		}
		for _, root := range g.Files {
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				bad(pre+"grants.files", "root %s is not a directory", root)
			}
		}
		for _, h := range g.HTTP.Hosts {
			if !grantHost(h) {
				bad(pre+"grants.http.hosts", "want a host, host:port or *.domain (api.example.com, api.example.com:8443, *.example.com, 203.0.113.7, [2001:db8::1]:443), got %q", h)
			}
		}
		validateLimits(pre+"limits.", p.Limits, &cfg.Plugins.Limits, bad)
		cfg.Plugin[name] = p
	}
	validateAuth(cfg, bad)
	validateOps(cfg, bad)
	validateTasks(cfg, bad)
	return ps
}

// limitChecks bound every key of Limits, by its name below limits.
var limitChecks = []struct {
	key   string
	value func(Limits) any
	ok    func(Limits) bool
	want  string // what the value must be
}{
	{"timeout", func(l Limits) any { return l.Timeout }, func(l Limits) bool { return l.Timeout > 0 && l.Timeout <= 10*time.Minute },
		"must be between 1ns and 10m"},
	{"memoryPages", func(l Limits) any { return l.MemoryPages }, func(l Limits) bool { return l.MemoryPages >= 64 && l.MemoryPages <= 65536 },
		"must be between 64 and 65536 (a Go guest needs at least 64)"},
	{"instances", func(l Limits) any { return l.Instances }, func(l Limits) bool { return l.Instances >= 1 && l.Instances <= 256 },
		"must be between 1 and 256"},
	{"idleTimeout", func(l Limits) any { return l.IdleTimeout }, func(l Limits) bool { return l.IdleTimeout >= 0 && l.IdleTimeout <= 24*time.Hour },
		"must be between 0 (never close idle instances) and 24h"},
	{"sleepAfter", func(l Limits) any { return l.SleepAfter }, func(l Limits) bool { return l.SleepAfter >= 0 && l.SleepAfter <= 24*time.Hour },
		"must be between 0 (never sleep) and 24h"},
	{"maxRequestBytes", func(l Limits) any { return l.MaxRequestBytes }, func(l Limits) bool { return l.MaxRequestBytes >= 1 && l.MaxRequestBytes <= 64<<20 },
		"must be between 1 and 67108864"},
	{"maxResponseBytes", func(l Limits) any { return l.MaxResponseBytes }, func(l Limits) bool { return l.MaxResponseBytes >= 1 && l.MaxResponseBytes <= 256<<20 },
		"must be between 1 and 268435456"},
	{"quarantineAfter", func(l Limits) any { return l.QuarantineAfter }, func(l Limits) bool { return l.QuarantineAfter >= 0 },
		"must not be negative"},
	{"httpMaxHeaders", func(l Limits) any { return l.HTTPMaxHeaders }, func(l Limits) bool { return l.HTTPMaxHeaders >= 1 && l.HTTPMaxHeaders <= 10000 },
		"must be between 1 and 10000"},
	{"httpMaxHeaderBytes", func(l Limits) any { return l.HTTPMaxHeaderBytes }, func(l Limits) bool { return l.HTTPMaxHeaderBytes >= 1 && l.HTTPMaxHeaderBytes <= 1<<20 },
		"must be between 1 and 1048576"},
}

// validateLimits reports every limit of l out of its bounds, as the key
// pre+name. A limit equal to inherited's (plugins.limits, for an entry)
// is left to the check of that one: an entry that sets nothing must not
// repeat a problem of plugins.limits once per plugin.
func validateLimits(pre string, l Limits, inherited *Limits, bad func(key, format string, args ...any)) {
	for _, c := range limitChecks {
		if inherited != nil && c.value(l) == c.value(*inherited) {
			continue
		}
		if !c.ok(l) {
			bad(pre+c.key, "%s, got %v", c.want, c.value(l))
		}
	}
}
