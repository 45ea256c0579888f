package main

import (
	"fmt"
	"strings"
)

// The fixture every server in the comparison serves, byte for byte the same
// data as plugins/bench/fixture (Wasm), cmd/corral-bench (corral, native)
// and interop/node/server.mjs (TypeScript SDK).
const scheme = "bfx000"

// docURI is the 1 KiB text resource.
const docURI = scheme + "://doc"

// docText is the 1 KiB text of docURI.
var docText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]

// candidates are the 1,000 completion candidates of greet's "name".
var candidates = func() []string {
	c := make([]string, 1000)
	for i := range c {
		c[i] = fmt.Sprintf("cand-%04d", i)
	}
	return c
}()

// itemURI returns the URI of item resource i (1-based).
func itemURI(i int) string { return fmt.Sprintf("%s://item/%04d", scheme, i) }

// complete returns the candidates starting with prefix, in order.
func complete(prefix string) []string {
	out := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// greeting is the text of the greet prompt.
func greeting(name, style string) string {
	return "Hello, " + name + "! Please answer in a " + style + " style."
}
