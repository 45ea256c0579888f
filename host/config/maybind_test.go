package config

import (
	"fmt"
	"testing"
)

// TestMayBind holds the index to its definition: some bound entry's
// binding selects the file (Binding.Check), or may once the digest is
// known (digest "": any entry naming the file or naming no file).
func TestMayBind(t *testing.T) {
	const a, b, da, db = "/p/a.wasm", "/p/b.wasm", "aaaa", "bbbb"
	bindings := []Binding{
		{}, {File: a}, {File: a, SHA256: da}, {File: b, SHA256: db}, {SHA256: da},
		{Source: "oci://r/x:1"}, {Source: "oci://r/x:1", File: b}, {Signer: "minisign:RWx"},
		{SHA256: db, Signer: "minisign:RWx"},
	}
	want := func(set []Binding, path, digest string) bool {
		for _, bd := range set {
			switch {
			case !bd.Bound():
			case digest == "":
				if bd.File == "" || bd.File == path {
					return true
				}
			case bd.Check(path, digest) == nil:
				return true
			}
		}
		return false
	}
	// Every set of up to two of the bindings, against every file and digest.
	for i := range bindings {
		for j := i; j < len(bindings); j++ {
			set := []Binding{bindings[i], bindings[j]}
			cfg := &Config{Plugin: map[string]Plugin{}}
			for k, bd := range set {
				p := DefaultPlugin()
				p.Binding = bd
				cfg.Plugin[fmt.Sprint("p", k)] = p
			}
			idx := cfg.Bindings()
			for _, path := range []string{a, b, "/p/c.wasm"} {
				for _, digest := range []string{"", da, db, "cccc"} {
					if got, w := idx.MayBind(path, digest), want(set, path, digest); got != w {
						t.Errorf("bindings %+v: MayBind(%s, %q) = %v, want %v", set, path, digest, got, w)
					}
				}
			}
		}
	}
}
