// Package transport carries MCP messages between clients and an
// [mcp.Server]: newline-delimited JSON over stdio ([ServeStdio]) and
// Streamable HTTP ([HTTPHandler]).
//
// Transports own framing, concurrency, cancellation and, for HTTP, the
// header, Origin/Host and status-code rules of spec 2026-07-28
// basic/transports; everything about the protocol itself is host/mcp's.
// Both transports are dual-era: an initialize request opens a legacy
// 2025-11-25 session (the whole stdio process, or one HTTP Mcp-Session-Id),
// while requests carrying per-request _meta are served statelessly.
package transport
