// Package plugin runs corral's WebAssembly plugins: it compiles a plugin
// file once (with a file-backed compilation cache), checks that it speaks
// the ABI in package abi (every required export with its exact signature,
// the version marker, a valid manifest from the describe operation), and
// serves calls from a bounded pool of sandboxed instances.
//
// Every call is limited: a wall-clock deadline, memory pages per instance,
// request and response bytes, and the number of concurrent calls (the pool
// size). An instance that traps, times out or misbehaves is closed and
// replaced, never reused. A plugin whose calls keep failing is quarantined
// for a back-off period and answers an error at once meanwhile.
//
// Host functions are capabilities (log, notify, kv, files, http, config).
// Each is always linked, so every guest links, but it answers
// abi.ErrnoDenied unless the plugin's manifest requested it and the
// operator granted it in Config.Grants. A guest that hands a host function
// an out-of-bounds pointer traps.
//
// The Wasm engine sits behind the small Engine interface. wazero (compiler
// backend, pure Go) is the default and the only engine of a default build;
// wasmtime (Cranelift, through cgo) is compiled in with -tags wasmtime and
// chosen per runtime (RuntimeConfig.Engine) or per plugin (Config.Engine).
// It bounds a call's wall-clock time with epoch interruption (a ticker
// advances the epoch every millisecond while calls run), memory with a
// store limiter, and optionally instructions with fuel (Limits.Fuel);
// serialized modules go to the same cache directory. TestEngineKit is the
// suite every engine must pass. The package knows nothing of
// JSON-RPC: a *Plugin is a catalog.Provider taking and returning the JSON
// payloads of package abi. abi/ABI.md is the guest-side specification.
package plugin
