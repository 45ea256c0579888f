// Package catalog routes MCP requests to the provider that owns a URI or a
// name, and merges every provider's metadata into paginated lists.
//
// A [Set] is an immutable snapshot of providers and their claims, checked for
// conflicts when it is built. A [Catalog] holds the current Set behind one
// atomic pointer: requests load it once, a reload builds a new Set and swaps
// it in, and in-flight requests finish on the Set they started with.
//
// Everything a provider returns is untrusted: the Set validates it (JSON
// shape, UTF-8, base64, URIs inside the provider's claims, sizes) before it
// is handed up to the protocol layer.
//
// The package knows MCP's data shapes but nothing of JSON-RPC or Wasm; see
// docs/architecture.md.
package catalog

import "github.com/corral-mcp/corral/host/trace"

// tracer starts the catalog's spans: one per operation, the parent of
// the plugin call it routed to (which names the plugin).
var tracer = trace.NewTracer("github.com/corral-mcp/corral/host/catalog")
