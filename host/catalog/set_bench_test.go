package catalog_test

import (
	"fmt"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// BenchmarkNewSet builds a Set of 100 providers declaring 1,000 resources
// each, what a reload of that many plugins costs the catalog (checking
// the claims and pre-encoding every list item).
func BenchmarkNewSet(b *testing.B) {
	var ps []catalog.Provider
	for i := range 100 {
		name := fmt.Sprintf("bfx%03d", i)
		m := abi.Manifest{Name: name, Version: "1", ABI: abi.Major, Schemes: []string{name}}
		for j := range 1000 {
			m.Resources = append(m.Resources, abi.Resource{URI: fmt.Sprintf("%s://item/%04d", name, j),
				Name: fmt.Sprintf("item-%04d", j), MimeType: "text/plain"})
		}
		ps = append(ps, &catalogtest.Provider{M: m})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := catalog.NewSet(ps, catalog.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
