package plugin

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"
)

// Defaults for Limits. A zero field in Limits takes its default.
const (
	DefaultTimeout             = 5 * time.Second
	DefaultMemoryPages         = 256 // 16 MiB
	DefaultMaxRequestBytes     = 4 << 20
	DefaultMaxResponseBytes    = 8 << 20
	DefaultFailureThreshold    = 5
	DefaultQuarantine          = 30 * time.Second
	DefaultMaxQuarantine       = 30 * time.Minute
	DefaultLogRate             = 50  // lines per second
	DefaultLogBurst            = 200 // lines
	DefaultNotifyRate          = 50  // notifications per second
	DefaultNotifyBurst         = 200 // notifications
	DefaultKVQuotaBytes        = 1 << 20
	DefaultKVMaxValueBytes     = 256 << 10
	DefaultFileMaxBytes        = 4 << 20
	DefaultFileMaxEntries      = 4096
	DefaultHTTPTimeout         = 10 * time.Second
	DefaultHTTPMaxBytes        = 4 << 20
	DefaultHTTPMaxRedirects    = 5
	DefaultHTTPMaxHeaders      = 100
	DefaultHTTPMaxHeaderBytes  = 32 << 10
	DefaultStderrBytes         = 8 << 10
	DefaultMaxCallsPerInstance = 100_000
	DefaultIdleTimeout         = time.Minute
)

// Config is how the operator runs one plugin.
type Config struct {
	// Source names the plugin file in errors and logs (e.g. its path).
	Source string
	// PoolSize is the most instances, and so concurrent calls (default
	// runtime.NumCPU()). One instance is kept warm; more are created while
	// calls wait for one.
	PoolSize int
	// IdleTimeout closes an instance idle for that long, down to the one
	// warm instance (default DefaultIdleTimeout; negative never closes
	// idle instances).
	IdleTimeout time.Duration
	// SleepAfter puts the plugin to sleep once nobody called it for that
	// long: every instance and its compiled code are released, its
	// manifest stays, and the next call wakes it (see life.go). Zero
	// keeps it hot.
	SleepAfter time.Duration
	// Engine runs the plugin: EngineWazero or EngineWasmtime; empty uses
	// the runtime's engine.
	Engine string
	// Limits apply to every call and instance.
	Limits Limits
	// Grants are the capabilities the operator allows. A capability is
	// usable only if the manifest also requests it.
	Grants Grants
	// GrantKeys names, for each capability (abi.Cap*), the operator's
	// setting that grants it. The log names it the first time a call is
	// denied for want of the grant; the guest only sees ErrnoDenied.
	GrantKeys map[string]string
}

// Limits bound what one plugin may consume. Zero fields take the Default*
// values above.
type Limits struct {
	// Timeout is the wall-clock deadline of one call (default 5s).
	Timeout time.Duration
	// MemoryPages caps an instance's linear memory in 64 KiB pages
	// (default 256 = 16 MiB; Go guests need at least 64).
	MemoryPages uint32
	// Fuel, when not zero, caps the guest instructions of one call (and of
	// an instantiation) in wasmtime fuel units; a call that runs out traps.
	// Only the wasmtime engine meters fuel: wazero refuses it. The
	// wall-clock Timeout applies either way.
	Fuel uint64
	// MaxRequestBytes and MaxResponseBytes cap a call's payloads
	// (defaults 4 MiB and 8 MiB).
	MaxRequestBytes  int
	MaxResponseBytes int
	// FailureThreshold consecutive failed calls quarantine the plugin
	// (default 5). A guest-declared error is not a failure.
	FailureThreshold int
	// Quarantine is the first quarantine period (default 30s); each
	// further one doubles, up to MaxQuarantine (default 30m).
	Quarantine    time.Duration
	MaxQuarantine time.Duration
	// LogRate and LogBurst are the log token bucket (defaults 50/s, 200).
	LogRate  float64
	LogBurst int
	// NotifyRate and NotifyBurst are the notify token bucket (defaults
	// 50/s, 200).
	NotifyRate  float64
	NotifyBurst int
	// KVQuotaBytes caps the plugin's kv store, keys plus values (default
	// 1 MiB); KVMaxValueBytes caps one value (default 256 KiB).
	KVQuotaBytes    int64
	KVMaxValueBytes int
	// FileMaxBytes caps one file read (default 4 MiB); FileMaxEntries caps
	// one directory listing (default 4096).
	FileMaxBytes   int64
	FileMaxEntries int
	// HTTPTimeout, HTTPMaxBytes and HTTPMaxRedirects bound one fetch
	// (defaults 10s, 4 MiB, 5). HTTPMaxBytes covers the response's header
	// names and values as well as its body.
	HTTPTimeout      time.Duration
	HTTPMaxBytes     int64
	HTTPMaxRedirects int
	// HTTPMaxHeaders and HTTPMaxHeaderBytes cap a fetch's response header
	// lines and the bytes of their names and values (defaults 100 and
	// 32 KiB).
	HTTPMaxHeaders     int
	HTTPMaxHeaderBytes int
	// StderrBytes is how much of an instance's stderr is kept (the tail)
	// to log when it fails (default 8 KiB).
	StderrBytes int
	// MaxCallsPerInstance recycles an instance after that many calls
	// (default 100,000), bounding the growth of its memory.
	MaxCallsPerInstance int
}

// Grants are the capabilities an operator gives one plugin.
type Grants struct {
	Log    bool
	Notify bool
	KV     bool
	// Files are absolute directories the plugin may read below; the files
	// capability is granted when there is at least one.
	Files []string
	// HTTPHosts are the host names (or host:port) the plugin may fetch
	// from; "*.example.com" matches subdomains. The http capability is
	// granted when there is at least one.
	HTTPHosts []string
	// AllowPrivate lets fetches reach loopback, private, link-local and
	// other non-public addresses.
	AllowPrivate bool
	// Config are operator-set values the plugin reads with config_get; the
	// config capability is granted when there is at least one.
	Config map[string]string
}

func (c Config) withDefaults() (Config, error) {
	if c.PoolSize <= 0 {
		c.PoolSize = runtime.NumCPU()
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.SleepAfter < 0 {
		return c, fmt.Errorf("plugin: sleepAfter %v is negative", c.SleepAfter)
	}
	l := &c.Limits
	setDur(&l.Timeout, DefaultTimeout)
	if l.MemoryPages == 0 {
		l.MemoryPages = DefaultMemoryPages
	}
	if l.MemoryPages > 65536 {
		return c, fmt.Errorf("plugin: memory limit %d pages is over 65536", l.MemoryPages)
	}
	setInt(&l.MaxRequestBytes, DefaultMaxRequestBytes)
	setInt(&l.MaxResponseBytes, DefaultMaxResponseBytes)
	setInt(&l.FailureThreshold, DefaultFailureThreshold)
	setDur(&l.Quarantine, DefaultQuarantine)
	setDur(&l.MaxQuarantine, DefaultMaxQuarantine)
	if l.LogRate <= 0 {
		l.LogRate = DefaultLogRate
	}
	setInt(&l.LogBurst, DefaultLogBurst)
	if l.NotifyRate <= 0 {
		l.NotifyRate = DefaultNotifyRate
	}
	setInt(&l.NotifyBurst, DefaultNotifyBurst)
	if l.KVQuotaBytes <= 0 {
		l.KVQuotaBytes = DefaultKVQuotaBytes
	}
	setInt(&l.KVMaxValueBytes, DefaultKVMaxValueBytes)
	if l.FileMaxBytes <= 0 {
		l.FileMaxBytes = DefaultFileMaxBytes
	}
	setInt(&l.FileMaxEntries, DefaultFileMaxEntries)
	setDur(&l.HTTPTimeout, DefaultHTTPTimeout)
	if l.HTTPMaxBytes <= 0 {
		l.HTTPMaxBytes = DefaultHTTPMaxBytes
	}
	setInt(&l.HTTPMaxRedirects, DefaultHTTPMaxRedirects)
	setInt(&l.HTTPMaxHeaders, DefaultHTTPMaxHeaders)
	setInt(&l.HTTPMaxHeaderBytes, DefaultHTTPMaxHeaderBytes)
	setInt(&l.StderrBytes, DefaultStderrBytes)
	setInt(&l.MaxCallsPerInstance, DefaultMaxCallsPerInstance)
	for _, root := range c.Grants.Files {
		if !filepath.IsAbs(root) {
			return c, fmt.Errorf("plugin: file root %q is not absolute", root)
		}
	}
	return c, nil
}

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
