// Package corral is the Go guest SDK for corral plugins: WebAssembly
// modules that serve MCP resources, prompts and tools through the corral
// host.
//
// A plugin registers what it serves on a Plugin and hands it to Serve from
// an init function; its main function stays empty:
//
//	func main() {}
//
//	func init() {
//		p := corral.New("notes", "1.0.0")
//		p.Scheme("notes")
//		p.Resource(abi.Resource{URI: "notes://today", Name: "today"}, readToday)
//		p.Request(abi.CapLog)
//		corral.Serve(p)
//	}
//
// Build it with the stock Go toolchain as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o notes.wasm .
//
// The SDK implements the guest side of the ABI in package abi (see
// abi/ABI.md): it exports corral_abi_v1, corral_buffer and corral_call,
// decodes each request, dispatches it to the registered handler, checks
// required prompt arguments and tool arguments, maps handler errors to ABI
// error codes and encodes the response. Host capabilities (Log, Notify*,
// KV, Files, HTTP, Config) are plain Go calls that return errors wrapping
// ErrDenied, ErrNotFound and the other errno sentinels.
//
// Outside GOOS=wasip1 the host functions are served by a FakeHost, an
// in-memory stand-in installed with UseHost, so a plugin's logic can be unit
// tested natively with go test.
package corral
