// Command files is a corral plugin serving the directory trees the
// operator granted as file:// resources.
//
// URIs are file:///absolute/path. Files read as text when they are valid
// UTF-8 without NUL bytes and as base64 blobs otherwise, with a MIME type
// chosen by extension; directories read as a listing of their entries
// (mimeType inode/directory): one entry name per line, directories with a
// trailing slash, or "(empty directory)". resources/list walks every root depth-first
// in name order; its cursor names the last entry listed, so each page costs
// a few directory listings along that path rather than a walk from the
// start.
package main

import (
	"encoding/base64"
	"errors"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func main() {}

func init() { corral.Serve(newPlugin()) }

// dirMIME is the MIME type of a directory listing.
const dirMIME = "inode/directory"

// pathTemplate is the template naming any path below the roots.
const pathTemplate = "file:///{+path}"

func newPlugin() *corral.Plugin {
	s := &server{}
	p := corral.New("files", "1.0.0")
	p.Title("Files")
	p.Description("Read-only access to the directory trees the operator granted, as file:// resources.")
	p.Scheme("file")
	p.Require(abi.CapFiles) // serves nothing without a root
	p.Request(abi.CapLog)
	p.Template(abi.Template{URITemplate: pathTemplate, Name: "file", Title: "File or directory",
		Description: "A file or directory under one of the granted roots"}, s.read, s.completePath)
	p.Reader(s.read)
	p.Lister(s.list)
	return p
}

// server holds the granted roots, fetched once per instance.
type server struct {
	roots []string
}

func (s *server) getRoots() ([]string, error) {
	if s.roots != nil {
		return s.roots, nil
	}
	roots, err := corral.Files.Roots()
	if err != nil {
		return nil, err
	}
	clean := make([]string, 0, len(roots))
	for _, r := range roots {
		if strings.HasPrefix(r, "/") {
			clean = append(clean, path.Clean(r))
		}
	}
	s.roots = clean
	return clean, nil
}

// rootOf returns the index of the root containing p, or -1.
func rootOf(roots []string, p string) int {
	for i, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return i
		}
	}
	return -1
}

// uriOf returns the file:// URI of an absolute path.
func uriOf(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

// pathOf returns the absolute, clean path a file:// URI names.
func pathOf(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Opaque != "" {
		return "", corral.InvalidParams("not a file:///absolute/path URI: " + uri)
	}
	p := u.Path
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return "", corral.InvalidParams("not a clean absolute path: " + uri)
	}
	return p, nil
}

// notFound says uri does not exist, the same way whether it is missing or
// outside the roots.
func notFound(uri string) error { return corral.NotFound("resource not found: " + uri) }

func (s *server) read(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	p, err := pathOf(r.URI)
	if err != nil {
		return nil, err
	}
	roots, err := s.getRoots()
	if err != nil {
		return nil, err
	}
	if rootOf(roots, p) < 0 {
		return nil, notFound(r.URI)
	}
	fi, err := corral.Files.Stat(p)
	if err != nil {
		return nil, hostError(r.URI, err)
	}
	if fi.Dir {
		entries, err := corral.Files.List(p)
		if err != nil {
			return nil, hostError(r.URI, err)
		}
		sortByName(entries)
		var b strings.Builder
		for _, e := range entries {
			b.WriteString(e.Name)
			if e.Dir {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
		}
		if len(entries) == 0 {
			b.WriteString("(empty directory)\n")
		}
		return corral.Contents(corral.TextContents(r.URI, dirMIME, b.String())), nil
	}
	data, err := corral.Files.Read(p)
	if err != nil {
		return nil, hostError(r.URI, err)
	}
	return corral.Contents(fileContents(r.URI, p, data)), nil
}

// fileContents returns text contents for UTF-8 text and a blob otherwise.
func fileContents(uri, p string, data []byte) []byte {
	mime := mimeType(p)
	if isText(data) {
		if mime == "" {
			mime = "text/plain"
		}
		return corral.TextContents(uri, mime, string(data))
	}
	if mime == "" {
		mime = "application/octet-stream"
	}
	return corral.BlobContents(uri, mime, data)
}

// isText reports whether data is valid UTF-8 without NUL bytes.
func isText(data []byte) bool {
	return utf8.Valid(data) && !slices.Contains(data, 0)
}

// hostError maps a failed host call on uri: missing and denied paths are
// not found; other failures pass through.
func hostError(uri string, err error) error {
	if errors.Is(err, corral.ErrNotFound) || errors.Is(err, corral.ErrDenied) {
		return notFound(uri)
	}
	return err
}

func sortByName(list []abi.FileInfo) {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}

func resourceOf(fi abi.FileInfo) abi.Resource {
	r := abi.Resource{URI: uriOf(fi.Path), Name: fi.Name, Title: fi.Path,
		Annotations: corral.Annotations{LastModified: fi.ModTime}.JSON()}
	if r.Name == "" || r.Name == "." {
		r.Name = fi.Path
	}
	if fi.Dir {
		r.MimeType = dirMIME
	} else {
		r.MimeType = mimeType(fi.Path)
		size := fi.Size
		r.Size = &size
	}
	return r
}

// A cursor names the last entry listed: its root's index and its path
// relative to that root ("" for the root itself).
func encodeCursor(root int, rel string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(root) + ":" + rel))
}

func decodeCursor(c string, roots []string) (root int, p string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", corral.InvalidParams("malformed cursor")
	}
	idx, rel, ok := strings.Cut(string(raw), ":")
	root, err = strconv.Atoi(idx)
	if !ok || err != nil || root < 0 || root >= len(roots) {
		return 0, "", corral.InvalidParams("malformed cursor")
	}
	p = roots[root]
	if rel != "" {
		p = strings.TrimSuffix(p, "/") + "/" + rel
		if path.Clean(p) != p {
			return 0, "", corral.InvalidParams("malformed cursor")
		}
	}
	return root, p, nil
}

// walker lists directories at most once per page.
type walker struct {
	roots []string
	dirs  map[string][]abi.FileInfo
}

// children returns the sorted entries of dir; a directory that vanished or
// cannot be listed has none.
func (w *walker) children(dir string) []abi.FileInfo {
	if l, ok := w.dirs[dir]; ok {
		return l
	}
	l, err := corral.Files.List(dir)
	if err != nil {
		l = nil
	}
	sortByName(l)
	w.dirs[dir] = l
	return l
}

// rootEntry describes root i, or reports false when it cannot be read.
func (w *walker) rootEntry(i int) (abi.FileInfo, bool) {
	fi, err := corral.Files.Stat(w.roots[i])
	if err != nil {
		return abi.FileInfo{}, false
	}
	fi.Path = w.roots[i]
	return fi, true
}

// firstFrom returns the first readable root entry at index i or later.
func (w *walker) firstFrom(i int) (int, abi.FileInfo, bool) {
	for ; i < len(w.roots); i++ {
		if fi, ok := w.rootEntry(i); ok {
			return i, fi, true
		}
	}
	return 0, abi.FileInfo{}, false
}

// next returns the entry after cur (in root i) in depth-first name order.
func (w *walker) next(i int, cur string, isDir bool) (int, abi.FileInfo, bool) {
	if isDir {
		if kids := w.children(cur); len(kids) > 0 {
			return i, kids[0], true
		}
	}
	for cur != w.roots[i] {
		parent, name := path.Dir(cur), path.Base(cur)
		kids := w.children(parent)
		j := sort.Search(len(kids), func(k int) bool { return kids[k].Name > name })
		if j < len(kids) {
			return i, kids[j], true
		}
		cur = parent
	}
	return w.firstFrom(i + 1)
}

func (s *server) list(r *abi.ListResourcesRequest) ([]abi.Resource, string, error) {
	roots, err := s.getRoots()
	if err != nil {
		return nil, "", err
	}
	w := &walker{roots: roots, dirs: map[string][]abi.FileInfo{}}
	var (
		i  int
		fi abi.FileInfo
		ok bool
	)
	if r.Cursor == "" {
		i, fi, ok = w.firstFrom(0)
	} else {
		root, p, err := decodeCursor(r.Cursor, roots)
		if err != nil {
			return nil, "", err
		}
		st, err := corral.Files.Stat(p)
		i, fi, ok = w.next(root, p, err == nil && st.Dir)
	}
	var out []abi.Resource
	for ok {
		out = append(out, resourceOf(fi))
		if len(out) == r.Limit {
			break
		}
		i, fi, ok = w.next(i, fi.Path, fi.Dir)
	}
	if !ok {
		return out, "", nil // the walk ended within this page
	}
	// The page is full; a cursor is only due if something follows.
	if _, _, more := w.next(i, fi.Path, fi.Dir); !more {
		return out, "", nil
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(fi.Path, roots[i]), "/")
	return out, encodeCursor(i, rel), nil
}

// completePath completes the path variable of file:///{+path}: the roots
// first, then the entries of the directory being typed.
func (s *server) completePath(r *abi.CompleteRequest) ([]string, error) {
	roots, err := s.getRoots()
	if err != nil {
		return nil, err
	}
	typed := "/" + strings.TrimPrefix(r.Argument.Value, "/")
	var out []string
	for _, root := range roots {
		if strings.HasPrefix(root, typed) && root != typed {
			out = append(out, strings.TrimPrefix(root, "/"))
		}
	}
	dir, prefix := path.Dir(typed), path.Base(typed)
	if strings.HasSuffix(typed, "/") {
		dir, prefix = path.Clean(typed), ""
	}
	if rootOf(roots, dir) >= 0 {
		entries, err := corral.Files.List(dir)
		if err == nil {
			sortByName(entries)
			for _, e := range entries {
				if strings.HasPrefix(e.Name, prefix) {
					out = append(out, strings.TrimPrefix(path.Join(dir, e.Name), "/"))
				}
			}
		}
	}
	return out, nil
}

// mimeTypes maps lowercased file extensions to MIME types.
var mimeTypes = map[string]string{
	".txt": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".csv": "text/csv",
	".js": "text/javascript", ".mjs": "text/javascript", ".ts": "text/x-typescript",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".xml": "application/xml", ".go": "text/x-go",
	".py": "text/x-python", ".rs": "text/x-rust", ".c": "text/x-c", ".h": "text/x-c",
	".java": "text/x-java", ".sh": "application/x-sh", ".sql": "application/sql",
	".wat": "text/plain", ".mod": "text/plain", ".sum": "text/plain",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".svg": "image/svg+xml", ".webp": "image/webp", ".ico": "image/vnd.microsoft.icon",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
	".tar": "application/x-tar", ".wasm": "application/wasm", ".wav": "audio/wav",
	".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".mp4": "video/mp4", ".webm": "video/webm",
}

// mimeType returns the MIME type for p's extension, or "" when unknown.
func mimeType(p string) string { return mimeTypes[strings.ToLower(path.Ext(p))] }
