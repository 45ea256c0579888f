package registry

import (
	"context"
	"math"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// WasmLoader returns a Loader that compiles plugin files with rt.
func WasmLoader(rt *plugin.Runtime) Loader { return wasmLoader{rt} }

type wasmLoader struct{ rt *plugin.Runtime }

// Compile compiles the file (through the runtime's cache) and describes
// it once under probe's limits and engine, with no grants, to read its
// manifest; the instance that described it serves the first plugin of it
// that runs under the same engine and memory limit. A file whose
// description the runtime's metadata cache holds is neither compiled nor
// instantiated (plugin.Runtime.Open), and with data nil not even read. The module keeps no copy of data:
// it reads path again (checking the digest) when it must compile once
// more.
func (l wasmLoader) Compile(ctx context.Context, path string, data []byte, digest string, settings config.Plugin) (Module, error) {
	pc := PluginConfig(path, "", settings) // the name is what describe tells
	pc.PoolSize, pc.Grants = 1, plugin.Grants{}
	m, err := l.rt.Open(ctx, plugin.File{Path: path, Data: data, Digest: digest}, pc)
	if err != nil {
		return nil, err
	}
	return &wasmModule{rt: l.rt, m: m, path: path, manifest: m.Manifest()}, nil
}

type wasmModule struct {
	rt       *plugin.Runtime
	m        *plugin.Module
	path     string
	manifest *abi.Manifest
}

func (w *wasmModule) Manifest() *abi.Manifest { return w.manifest }

func (w *wasmModule) Instantiate(ctx context.Context, s config.Plugin) (Plugin, error) {
	return w.rt.Load(ctx, w.m, PluginConfig(w.path, w.manifest.Name, s))
}

func (w *wasmModule) Close(ctx context.Context) error { return w.m.Close(ctx) }

// CompileLimits translates the operator's compile limits into the
// runtime's; zero values stay zero and take the runtime's defaults.
func CompileLimits(c config.Compile) plugin.CompileLimits {
	return plugin.CompileLimits{
		MaxFileBytes:     c.MaxFileBytes,
		MaxFunctions:     c.MaxFunctions,
		MaxFunctionBytes: c.MaxFunctionBytes,
		MaxNesting:       c.MaxNesting,
		MaxLocals:        c.MaxLocals,
	}
}

// PluginConfig translates the operator's settings for the plugin file at
// path into the runtime's configuration; name is the plugin's, for the
// keys the log names when a call is denied a capability.
func PluginConfig(path, name string, s config.Plugin) plugin.Config {
	keys := map[string]string{}
	for _, c := range abi.Capabilities {
		keys[c] = config.GrantKey(name, c)
	}
	threshold := s.Limits.QuarantineAfter
	if threshold == 0 {
		threshold = math.MaxInt32 // never quarantine
	}
	idle := s.Limits.IdleTimeout
	if idle == 0 {
		idle = -1 // keep every instance
	}
	return plugin.Config{
		Source:      path,
		GrantKeys:   keys,
		Engine:      s.Engine,
		PoolSize:    s.Limits.Instances,
		IdleTimeout: idle,
		SleepAfter:  s.Limits.SleepAfter,
		Limits: plugin.Limits{
			Timeout:          s.Limits.Timeout,
			MemoryPages:      s.Limits.MemoryPages,
			MaxRequestBytes:  s.Limits.MaxRequestBytes,
			MaxResponseBytes: s.Limits.MaxResponseBytes,
			FailureThreshold: threshold,
			KVQuotaBytes:     s.Grants.KVQuota,

			HTTPMaxHeaders:     s.Limits.HTTPMaxHeaders,
			HTTPMaxHeaderBytes: s.Limits.HTTPMaxHeaderBytes,
		},
		Grants: plugin.Grants{
			Log:          s.Grants.Log,
			Notify:       s.Grants.Notify,
			KV:           s.Grants.KV,
			Files:        s.Grants.Files,
			HTTPHosts:    s.Grants.HTTP.Hosts,
			AllowPrivate: s.Grants.HTTP.AllowPrivate,
			Config:       s.Grants.Config,
		},
	}
}

var (
	_ Plugin = (*plugin.Plugin)(nil)
	_ Loader = wasmLoader{}
	_ Module = (*wasmModule)(nil)
)
