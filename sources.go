// Package corral holds the sources `corral plugin new` writes into a new
// plugin project: every guest SDK and the example provider of
// docs/plugins.md §2 in each language. Nothing of corral is published to a
// registry, so the scaffold carries its SDK with it.
//
// It lives at the module root because go:embed reaches only files at or
// below the embedding package's directory, and the sources sit in sdk/,
// examples/ and abi/. The Go SDK (sdk-guest) and the Go example
// (examples/go) are modules of their own, whose files go:embed cannot take
// from another module at all: sdk/_go holds a committed copy of both (the
// go tool ignores directories starting with an underscore, so the copy is
// never built as part of this module), and TestGoCopy fails when it
// differs from the originals (`go test -run TestGoCopy . -update` rewrites
// it).
package corral

import "embed"

// Sources is the tree the scaffold copies from, with the repository's paths.
//
//go:embed abi/abi.go abi/input.go abi/payload.go
//go:embed sdk/_go
//go:embed sdk/assemblyscript/assembly/*.ts sdk/assemblyscript/package.json sdk/assemblyscript/package-lock.json
//go:embed sdk/assemblyscript/test/host.mjs examples/assemblyscript/index.ts examples/assemblyscript/example.test.mjs
//go:embed sdk/c/corral.h sdk/c/corral.c examples/c/example.c
//go:embed sdk/rust/Cargo.toml sdk/rust/src/*.rs examples/rust/Cargo.toml examples/rust/Cargo.lock examples/rust/src/lib.rs
var Sources embed.FS

// GoCopy maps each directory of sdk/_go to the module directory it copies;
// only the non-test .go files are copied.
var GoCopy = map[string]string{
	"sdk/_go/sdk-guest": "sdk-guest",
	"sdk/_go/example":   "examples/go",
}
