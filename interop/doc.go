// Package interop judges corral with independent MCP clients.
//
// Its tests start the real binary (../bin/corral) as a subprocess and talk
// to it with the official Go SDK client, the mcp-go client and the
// TypeScript SDK v2 client (node/client.mjs), in both protocol eras
// (2026-07-28 and 2025-11-25) and over both stdio and Streamable HTTP. The
// module deliberately imports none of corral's packages: the server is a
// black box judged only by what it says on the wire.
//
// The tests skip, saying why, when ../bin/corral or
// ../build/plugins/conformance.wasm is missing (run `make build plugins`), and
// the TypeScript tests skip when the peers are not installed (run
// `make peers`).
//
// CORRAL_BIN overrides the path of the binary under test.
//
// To point the harness at another server (for example the Go SDK's
// conformance everything-server, to check the harness itself), set
// INTEROP_SERVER_CMD to a stdio command line and INTEROP_HTTP_URL (and,
// when the legacy era is served elsewhere, INTEROP_HTTP_URL_2025) to
// Streamable HTTP endpoints.
package interop
