// Package mcp is corral's protocol core: it decodes JSON-RPC 2.0 messages,
// picks the protocol era of each request and answers MCP methods from the
// current catalog Set. It knows nothing of Wasm and nothing of the bytes of
// any transport; host/transport frames messages and calls [Server.Serve].
//
// # Eras
//
// corral is a dual-era server (spec 2026-07-28, basic/versioning §"Serving
// both eras"):
//
//   - A request whose params._meta carries
//     "io.modelcontextprotocol/protocolVersion" is modern: it is served
//     statelessly under 2026-07-28, whatever the [Session] holds. Its
//     _meta must also carry clientCapabilities (else -32602), and its
//     version must be served (else -32022 with data.supported/requested).
//     initialize, ping, logging/setLevel and resources/(un)subscribe do not
//     exist for it (-32601).
//   - initialize starts a legacy 2025-11-25 session in the Session the
//     transport passes (one per stdio process, one per HTTP Mcp-Session-Id).
//     Later requests without _meta in that session get legacy semantics:
//     ping, logging/setLevel, resource-not-found as -32002, results without
//     resultType, ttlMs or cacheScope.
//   - Any other request without _meta is refused with -32602 so that a
//     probing client falls back.
//
// # Results
//
// Every modern result carries resultType and
// _meta["io.modelcontextprotocol/serverInfo"]; cacheable ones (discover, the
// four lists, resources/read) carry ttlMs and cacheScope. Results are
// spliced together from the catalog's already validated raw JSON, without
// decoding and re-encoding it.
//
// # Using it
//
// A transport decodes each incoming message with [Decode], validates
// whatever its framing adds (HTTP headers, see [Message.HeaderName]), then
// calls [Server.Serve] with a context that it cancels when the client
// cancels the request. The returned [Reply] holds the encoded response (nil
// for notifications and cancelled requests) and, for errors, the [Error]
// that was sent, so that HTTP can pick a status code.
package mcp
