// Command corral serves MCP resources, prompts and tools from sandboxed
// WebAssembly plugins.
//
// Usage:
//
//	corral serve [--config FILE] [--plugins DIR] [--http ADDR] [--ws ADDR] [--admin ADDR] [--log-level L]
//	corral plugin inspect [--json] FILE.wasm
//	corral plugin check [--config FILE] FILE.wasm
//	corral config check FILE
//	corral version
//
// serve speaks newline-delimited JSON-RPC on stdin/stdout by default (logs
// go to stderr; it exits when stdin closes). With --http it serves
// Streamable HTTP at /mcp plus /healthz and /readyz on the same listener,
// and /metrics and /status there to operator credentials only; with
// --admin all four are served on their own listener.
// The plugin directory is watched and hot-reloaded.
//
// Exit codes: 0 success, 1 failure, 2 bad usage. Every command takes --help.
// The configuration keys are documented in docs/configuration.md.
package main
