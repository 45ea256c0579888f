// Package corral holds the sources `corral plugin new` writes into a new
// plugin project: every guest SDK and the example provider of
// docs/plugins.md §2 in each language. Nothing of corral is published to a
// registry, so the scaffold carries its SDK with it.
//
// It lives at the module root because go:embed reaches only files at or
// below the embedding package's directory, and the sources sit in abi/,
// sdk-guest/, sdk/ and examples/.
package corral

import "embed"

// Sources is the tree the scaffold copies from, with the repository's paths.
//
//go:embed abi/abi.go abi/input.go abi/payload.go
//go:embed sdk-guest/*.go examples/go/main.go
//go:embed sdk/assemblyscript/assembly/*.ts sdk/assemblyscript/package.json sdk/assemblyscript/package-lock.json
//go:embed sdk/assemblyscript/test/host.mjs examples/assemblyscript/index.ts examples/assemblyscript/example.test.mjs
//go:embed sdk/c/corral.h sdk/c/corral.c examples/c/example.c
//go:embed sdk/rust/Cargo.toml sdk/rust/src/*.rs examples/rust/Cargo.toml examples/rust/Cargo.lock examples/rust/src/lib.rs
var Sources embed.FS
