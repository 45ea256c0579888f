package registry

import (
	"context"
	"sync/atomic"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
)

// Loader compiles plugin files. The Wasm runtime implements it through a
// thin adapter; tests use native providers.
type Loader interface {
	// Compile compiles a plugin file and reads its manifest, running its
	// initialization and describe under probe's limits and engine
	// (config.Config.ProbeSettings) without granting it anything. path
	// names the file in errors, which wrap plugin.ErrHost when the failure
	// is the host's rather than the file's (the server is not ready while
	// one lasts). digest is the sha256 (lowercase hex) of the content, ""
	// when the caller has not computed it. data is nil when the registry
	// knows the digest without reading the file (Options.DigestFile): a
	// loader that needs the bytes reads path and checks them against
	// digest.
	Compile(ctx context.Context, path string, data []byte, digest string, probe config.Plugin) (Module, error)
}

// Module is a compiled plugin file. One Module may back several Plugins
// over time, as the operator's settings change.
type Module interface {
	// Manifest is the plugin's self-description.
	Manifest() *abi.Manifest
	// Instantiate runs the module with the operator's settings.
	Instantiate(ctx context.Context, settings config.Plugin) (Plugin, error)
	// Close releases the compiled code. The registry calls it once no
	// Plugin of the module is in use.
	Close(ctx context.Context) error
}

// Plugin is a running plugin: a catalog provider that can be closed.
type Plugin interface {
	catalog.Provider
	// Life is where the plugin is in its life cycle, for Status:
	// "hot", "sleeping" or "waking" (plugin.Life*), "" when it has none.
	Life() string
	Close(ctx context.Context) error
}

// tracked wraps a Plugin to count calls in flight, so a retired plugin is
// closed only after they finish, and to name its content for the Set's
// generation. It spells out every method of catalog.Provider rather than
// lean on the embedded interface, so that a method added to the contract
// is a compile error here, not a call that silently misses the plugin.
type tracked struct {
	Plugin
	digest   string
	inflight atomic.Int64
}

// Call implements catalog.Provider.
func (t *tracked) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	t.inflight.Add(1)
	defer t.inflight.Add(-1)
	return t.Plugin.Call(ctx, c)
}

// RejectOutput implements catalog.Provider: the plugin hears of it.
func (t *tracked) RejectOutput(op abi.Op, err error) { t.Plugin.RejectOutput(op, err) }

// Digest implements catalog.Provider: the sha256 of the plugin file.
func (t *tracked) Digest() string { return t.digest }

// Manifest implements catalog.Provider.
func (t *tracked) Manifest() *abi.Manifest { return t.Plugin.Manifest() }

var _ catalog.Provider = (*tracked)(nil)
