//go:build !wasip1

package main

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
	"github.com/google/go-cmp/cmp"
)

var mod = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func fakeTree() *corral.FakeHost {
	h := corral.NewFakeHost(abi.CapFiles, abi.CapLog)
	h.Roots = []string{"/srv/docs", "/srv/more"}
	h.AddFile("/srv/docs/README.md", []byte("# Docs\n"), mod)
	h.AddFile("/srv/docs/a dir/x.json", []byte(`{"x":1}`), mod)
	h.AddFile("/srv/docs/a dir/deep/y.txt", []byte("y"), mod)
	h.AddFile("/srv/docs/img.png", []byte("\x89PNG\r\n\x1a\n\x00"), mod)
	h.AddFile("/srv/docs/z.bin", []byte{0xff, 0x00}, mod)
	h.AddFile("/srv/more/one.txt", []byte("1"), mod)
	h.Files["/srv/more/empty"] = corral.FakeFile{Dir: true, ModTime: mod}
	h.AddFile("/srv/secret.txt", []byte("no"), mod)
	return h
}

func handle(t *testing.T, p *corral.Plugin, op abi.Op, req any) (abi.Status, string) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	status, out := p.Handle(op, b)
	return status, string(out)
}

func TestRead(t *testing.T) {
	defer corral.UseHost(fakeTree())()
	p := newPlugin()
	tests := []struct {
		uri    string
		status abi.Status
		want   string
	}{
		{"file:///srv/docs/README.md", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs/README.md","mimeType":"text/markdown","text":"# Docs\n"}]}`},
		{"file:///srv/docs/a%20dir/x.json", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs/a%20dir/x.json","mimeType":"application/json","text":"{\"x\":1}"}]}`},
		{"file:///srv/docs/img.png", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs/img.png","mimeType":"image/png","blob":"iVBORw0KGgoA"}]}`},
		{"file:///srv/docs/z.bin", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs/z.bin","mimeType":"application/octet-stream","blob":"/wA="}]}`},
		{"file:///srv/docs", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs","mimeType":"inode/directory","text":"README.md\na dir/\nimg.png\nz.bin\n"}]}`},
		{"file:///srv/docs/", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/docs/","mimeType":"inode/directory","text":"README.md\na dir/\nimg.png\nz.bin\n"}]}`},
		{"file:///srv/more/empty", abi.StatusOK,
			`{"contents":[{"uri":"file:///srv/more/empty","mimeType":"inode/directory","text":"(empty directory)\n"}]}`},
		{"file:///srv/secret.txt", abi.StatusError, `{"code":"not_found","message":"resource not found: file:///srv/secret.txt"}`},
		{"file:///srv/docs/missing", abi.StatusError, `{"code":"not_found","message":"resource not found: file:///srv/docs/missing"}`},
		{"file:///srv/docs/../secret.txt", abi.StatusError, `{"code":"invalid_params","message":"not a clean absolute path: file:///srv/docs/../secret.txt"}`},
		{"file://example.com/srv/docs/README.md", abi.StatusError, `{"code":"invalid_params","message":"not a file:///absolute/path URI: file://example.com/srv/docs/README.md"}`},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			status, out := handle(t, p, abi.OpReadResource, abi.ReadResourceRequest{URI: tt.uri})
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// listAll pages through resources/list with the given page size.
func listAll(t *testing.T, p *corral.Plugin, limit int) (uris []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		status, out := handle(t, p, abi.OpListResources, abi.ListResourcesRequest{Cursor: cursor, Limit: limit})
		if status != abi.StatusOK {
			t.Fatalf("list: %s", out)
		}
		var res struct {
			Resources  []abi.Resource
			NextCursor string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Resources) > limit {
			t.Fatalf("page of %d over limit %d", len(res.Resources), limit)
		}
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		pages++
		if res.NextCursor == "" {
			return uris, pages
		}
		if pages > 100 {
			t.Fatal("listing does not end")
		}
		cursor = res.NextCursor
	}
}

func TestListPages(t *testing.T) {
	defer corral.UseHost(fakeTree())()
	want := []string{
		"file:///srv/docs",
		"file:///srv/docs/README.md",
		"file:///srv/docs/a%20dir",
		"file:///srv/docs/a%20dir/deep",
		"file:///srv/docs/a%20dir/deep/y.txt",
		"file:///srv/docs/a%20dir/x.json",
		"file:///srv/docs/img.png",
		"file:///srv/docs/z.bin",
		"file:///srv/more",
		"file:///srv/more/empty",
		"file:///srv/more/one.txt",
	}
	for _, limit := range []int{1, 2, 3, 10, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			got, pages := listAll(t, newPlugin(), limit)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}
}

func TestListResource(t *testing.T) {
	defer corral.UseHost(fakeTree())()
	_, out := handle(t, newPlugin(), abi.OpListResources, abi.ListResourcesRequest{Limit: 2})
	want := `{"resources":[` +
		`{"uri":"file:///srv/docs","name":"docs","title":"/srv/docs","mimeType":"inode/directory","annotations":{"lastModified":"2025-06-01T12:00:00Z"}},` +
		`{"uri":"file:///srv/docs/README.md","name":"README.md","title":"/srv/docs/README.md","mimeType":"text/markdown","size":7,"annotations":{"lastModified":"2025-06-01T12:00:00Z"}}],` +
		`"nextCursor":"` + encodeCursor(0, "README.md") + `"}`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestListResumesAfterDeletion(t *testing.T) {
	h := fakeTree()
	defer corral.UseHost(h)()
	p := newPlugin()
	// The cursor points at a directory that disappears before the next page.
	cursor := encodeCursor(0, "a dir")
	delete(h.Files, "/srv/docs/a dir/x.json")
	delete(h.Files, "/srv/docs/a dir/deep/y.txt")
	_, out := handle(t, p, abi.OpListResources, abi.ListResourcesRequest{Cursor: cursor, Limit: 1})
	if !strings.Contains(out, `"uri":"file:///srv/docs/img.png"`) {
		t.Errorf("resumed at %s, want img.png", out)
	}
}

func TestBadCursor(t *testing.T) {
	defer corral.UseHost(fakeTree())()
	p := newPlugin()
	for _, c := range []string{"!!", encodeCursor(5, ""), encodeCursor(0, "../x"), encodeCursor(0, "a//b")} {
		status, out := handle(t, p, abi.OpListResources, abi.ListResourcesRequest{Cursor: c, Limit: 5})
		if status != abi.StatusError || !strings.Contains(out, "malformed cursor") {
			t.Errorf("cursor %q: %d %s", c, status, out)
		}
	}
}

func TestCompletePath(t *testing.T) {
	defer corral.UseHost(fakeTree())()
	p := newPlugin()
	tests := []struct {
		value string
		want  []string
	}{
		{"", []string{"srv/docs", "srv/more"}},
		{"srv/d", []string{"srv/docs"}},
		{"srv/docs/", []string{"srv/docs/README.md", "srv/docs/a dir", "srv/docs/img.png", "srv/docs/z.bin"}},
		{"srv/docs/a", []string{"srv/docs/a dir"}},
		{"srv/secret", nil},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			_, out := handle(t, p, abi.OpComplete, abi.CompleteRequest{
				Ref: abi.CompleteRef{Type: "ref/resource", URI: pathTemplate}, Argument: abi.CompleteArgument{Name: "path", Value: tt.value}})
			var res abi.CompleteResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, res.Completion.Values); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoGrant(t *testing.T) {
	defer corral.UseHost(corral.NewFakeHost())()
	status, out := handle(t, newPlugin(), abi.OpReadResource, abi.ReadResourceRequest{URI: "file:///srv/docs/README.md"})
	if status != abi.StatusError || !strings.Contains(out, "permission denied") {
		t.Errorf("without the files grant: %d %s", status, out)
	}
}

func BenchmarkListPage(b *testing.B) {
	h := corral.NewFakeHost(abi.CapFiles)
	h.Roots = []string{"/r"}
	for i := range 20 {
		for j := range 50 {
			h.AddFile(fmt.Sprintf("/r/d%02d/f%03d.txt", i, j), []byte("x"), mod)
		}
	}
	defer corral.UseHost(h)()
	p := newPlugin()
	req, _ := json.Marshal(abi.ListResourcesRequest{Cursor: encodeCursor(0, "d10/f025.txt"), Limit: 50})
	b.ReportAllocs()
	for b.Loop() {
		if status, out := p.Handle(abi.OpListResources, req); status != abi.StatusOK {
			b.Fatal(string(out))
		}
	}
}

// FuzzCursor checks that any cursor either fails cleanly or names a clean
// path inside its root.
func FuzzCursor(f *testing.F) {
	roots := []string{"/srv/docs", "/"}
	f.Add(encodeCursor(0, "a/b"))
	f.Add(encodeCursor(1, "etc"))
	f.Add("MDouLi8uLg")
	f.Fuzz(func(t *testing.T, c string) {
		root, p, err := decodeCursor(c, roots)
		if err != nil {
			return
		}
		if rootOf(roots[root:root+1], p) != 0 || !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			t.Fatalf("cursor %q decodes to %q outside root %q", c, p, roots[root])
		}
	})
}
