package catalog_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

// BenchmarkListScaling is one resources/list page from a Set of 1, 10 and
// 100 native providers declaring 1,000 resources each: the first page and
// the last (through its cursor). Row 5 of `make bench` measures the same
// over HTTP with Wasm plugins; this isolates the catalog's share.
func BenchmarkListScaling(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10, 100} {
		var ps []catalog.Provider
		for i := range n {
			name := fmt.Sprintf("bfx%03d", i)
			m := abi.Manifest{Name: name, Version: "1", ABI: abi.Major, Schemes: []string{name}}
			for j := range 1000 {
				m.Resources = append(m.Resources, abi.Resource{URI: fmt.Sprintf("%s://item/%04d", name, j),
					Name: fmt.Sprintf("item-%04d", j), MimeType: "text/plain"})
			}
			ps = append(ps, &catalogtest.Provider{M: m})
		}
		set, err := catalog.NewSet(ps, catalog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		cursor := ""
		for {
			page, err := set.List(ctx, catalog.Request{Principal: catalog.Anonymous()}, catalog.ListResources, cursor)
			if err != nil {
				b.Fatal(err)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		for _, c := range []struct{ name, cursor string }{{"first", ""}, {"last", cursor}} {
			b.Run(fmt.Sprintf("plugins=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := set.List(ctx, catalog.Request{Principal: catalog.Anonymous()}, catalog.ListResources, c.cursor); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
