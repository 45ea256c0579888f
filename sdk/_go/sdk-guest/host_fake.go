//go:build !wasip1

package corral

import (
	"encoding/json"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// FakeHost is an in-memory stand-in for the corral host, used when the SDK
// is built for anything but GOOS=wasip1 so that plugins can be unit tested
// natively. It implements every host function with the host's contract:
// capabilities must be granted, files are read-only and confined to the
// roots, output is fetched with take. Install one with UseHost.
//
// Its exported fields configure it before use; the methods are safe for
// concurrent use.
type FakeHost struct {
	// Granted lists the granted capabilities (abi.Cap* names); a host
	// function of any other capability fails with ErrDenied.
	Granted []string
	// Roots are the granted file roots: absolute slash-separated paths.
	Roots []string
	// Files maps absolute slash-separated paths to files. Directories are
	// implied by the paths of the files below them, or added explicitly.
	Files map[string]FakeFile
	// Config holds the operator's configuration values.
	Config map[string]string
	// KV is the key-value store's content.
	KV map[string][]byte
	// KVQuota caps the total size of keys and values; 0 is no cap.
	KVQuota int
	// HTTP answers outbound requests; nil fails them with ErrIO. A
	// negative errno returned as the second value fails the request.
	HTTP func(req abi.HTTPRequest) (abi.HTTPResponse, int32)

	mu      sync.Mutex
	pending []byte
	logs    []FakeLog
	notes   []FakeNotification

	progressed []FakeProgress
}

// FakeFile is a file (or directory, when Dir is set) of a FakeHost.
type FakeFile struct {
	Data    []byte
	ModTime time.Time
	Dir     bool
}

// FakeLog is a line written with Log.
type FakeLog struct {
	Level   int32
	Message string
}

// FakeNotification is a notification sent with one of the Notify
// functions.
type FakeNotification struct {
	Kind    int32 // abi.Notify*
	Payload string
}

// NewFakeHost returns an empty FakeHost granting caps.
func NewFakeHost(caps ...string) *FakeHost {
	return &FakeHost{
		Granted: caps,
		Files:   map[string]FakeFile{},
		Config:  map[string]string{},
		KV:      map[string][]byte{},
	}
}

// AddFile adds a file; its parent directories are implied.
func (h *FakeHost) AddFile(p string, data []byte, mod time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.Files == nil {
		h.Files = map[string]FakeFile{}
	}
	h.Files[p] = FakeFile{Data: data, ModTime: mod}
}

// Logs returns the lines logged so far.
func (h *FakeHost) Logs() []FakeLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.logs)
}

// Notifications returns the notifications sent so far.
func (h *FakeHost) Notifications() []FakeNotification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.notes)
}

// host is the host the capability helpers call. Outside wasip1 it starts as
// a FakeHost that grants nothing, like the sandbox a manifest is read in.
var host hostABI = NewFakeHost()

// UseHost installs h as the host for the capability helpers and returns a
// function restoring the previous one. Tests that install hosts must not
// run in parallel with each other.
func UseHost(h *FakeHost) (restore func()) {
	prev := host
	host = h
	return func() { host = prev }
}

func (h *FakeHost) granted(c string) bool { return slices.Contains(h.Granted, c) }

// produce stages out as the pending output and returns its length.
func (h *FakeHost) produce(out []byte) int32 {
	h.pending = out
	return int32(len(out))
}

func (h *FakeHost) take(dst []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		return abi.ErrnoNotFound
	}
	if len(dst) < len(h.pending) {
		return abi.ErrnoTooLarge // the output stays pending
	}
	n := copy(dst, h.pending)
	h.pending = nil
	return int32(n)
}

func (h *FakeHost) log(level int32, msg []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapLog) {
		return abi.ErrnoDenied
	}
	if level < abi.LogDebug || level > abi.LogError {
		return abi.ErrnoInvalid
	}
	h.logs = append(h.logs, FakeLog{Level: level, Message: string(msg)})
	return 0
}

func (h *FakeHost) notify(kind int32, payload []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapNotify) {
		return abi.ErrnoDenied
	}
	switch kind {
	case abi.NotifyResourceUpdated:
		if len(payload) == 0 {
			return abi.ErrnoInvalid
		}
	case abi.NotifyResourcesListChanged, abi.NotifyPromptsListChanged, abi.NotifyToolsListChanged:
	default:
		return abi.ErrnoInvalid
	}
	h.notes = append(h.notes, FakeNotification{Kind: kind, Payload: string(payload)})
	return 0
}

func (h *FakeHost) kvGet(key []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapKV) {
		return abi.ErrnoDenied
	}
	v, ok := h.KV[string(key)]
	if !ok {
		return abi.ErrnoNotFound
	}
	return h.produce(slices.Clone(v))
}

func (h *FakeHost) kvSet(key, val []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapKV) {
		return abi.ErrnoDenied
	}
	if len(key) == 0 {
		return abi.ErrnoInvalid
	}
	if h.KVQuota > 0 {
		used := len(key) + len(val)
		for k, v := range h.KV {
			if k != string(key) {
				used += len(k) + len(v)
			}
		}
		if used > h.KVQuota {
			return abi.ErrnoQuota
		}
	}
	if h.KV == nil {
		h.KV = map[string][]byte{}
	}
	h.KV[string(key)] = slices.Clone(val)
	return 0
}

func (h *FakeHost) kvDelete(key []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapKV) {
		return abi.ErrnoDenied
	}
	delete(h.KV, string(key))
	return 0
}

// checkPath confines p to the roots, as the host does.
func (h *FakeHost) checkPath(p string) int32 {
	if !h.granted(abi.CapFiles) {
		return abi.ErrnoDenied
	}
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return abi.ErrnoInvalid
	}
	for _, r := range h.Roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return 0
		}
	}
	return abi.ErrnoDenied
}

// lookup finds p as a file or as a directory implied by the files below.
func (h *FakeHost) lookup(p string) (abi.FileInfo, bool) {
	if f, ok := h.Files[p]; ok {
		return fakeInfo(p, f), true
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	var newest time.Time
	found := slices.Contains(h.Roots, p)
	for q, f := range h.Files {
		if strings.HasPrefix(q, prefix) {
			found = true
			if f.ModTime.After(newest) {
				newest = f.ModTime
			}
		}
	}
	if !found {
		return abi.FileInfo{}, false
	}
	return fakeInfo(p, FakeFile{Dir: true, ModTime: newest}), true
}

func fakeInfo(p string, f FakeFile) abi.FileInfo {
	fi := abi.FileInfo{Path: p, Name: path.Base(p), Dir: f.Dir}
	if !f.Dir {
		fi.Size = int64(len(f.Data))
	}
	if !f.ModTime.IsZero() {
		fi.ModTime = f.ModTime.UTC().Format(time.RFC3339)
	}
	return fi
}

func (h *FakeHost) fileRead(pb []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := string(pb)
	if e := h.checkPath(p); e < 0 {
		return e
	}
	f, ok := h.Files[p]
	if !ok {
		if _, isDir := h.lookup(p); isDir {
			return abi.ErrnoInvalid
		}
		return abi.ErrnoNotFound
	}
	if f.Dir {
		return abi.ErrnoInvalid
	}
	return h.produce(slices.Clone(f.Data))
}

func (h *FakeHost) fileStat(pb []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := string(pb)
	if e := h.checkPath(p); e < 0 {
		return e
	}
	fi, ok := h.lookup(p)
	if !ok {
		return abi.ErrnoNotFound
	}
	return h.produceJSON(fi)
}

func (h *FakeHost) fileList(pb []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := string(pb)
	if e := h.checkPath(p); e < 0 {
		return e
	}
	fi, ok := h.lookup(p)
	if !ok {
		return abi.ErrnoNotFound
	}
	if !fi.Dir {
		return abi.ErrnoInvalid
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	children := map[string]bool{}
	for q := range h.Files {
		if rest, ok := strings.CutPrefix(q, prefix); ok && rest != "" {
			name, _, _ := strings.Cut(rest, "/")
			children[name] = true
		}
	}
	names := make([]string, 0, len(children))
	for n := range children {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]abi.FileInfo, 0, len(names))
	for _, n := range names {
		c, _ := h.lookup(prefix + n)
		list = append(list, c)
	}
	return h.produceJSON(list)
}

func (h *FakeHost) fileRoots() int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapFiles) {
		return abi.ErrnoDenied
	}
	roots := h.Roots
	if roots == nil {
		roots = []string{}
	}
	return h.produceJSON(roots)
}

func (h *FakeHost) httpFetch(rb []byte) int32 {
	h.mu.Lock()
	fetch := h.HTTP
	ok := h.granted(abi.CapHTTP)
	h.mu.Unlock()
	if !ok {
		return abi.ErrnoDenied
	}
	var req abi.HTTPRequest
	if err := json.Unmarshal(rb, &req); err != nil || (req.Method != "GET" && req.Method != "POST") {
		return abi.ErrnoInvalid
	}
	if fetch == nil {
		return abi.ErrnoIO
	}
	resp, errno := fetch(req)
	h.mu.Lock()
	defer h.mu.Unlock()
	if errno < 0 {
		return errno
	}
	return h.produceJSON(resp)
}

func (h *FakeHost) configGet(key []byte) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.granted(abi.CapConfig) {
		return abi.ErrnoDenied
	}
	v, ok := h.Config[string(key)]
	if !ok {
		return abi.ErrnoNotFound
	}
	return h.produce([]byte(v))
}

func (h *FakeHost) produceJSON(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return abi.ErrnoIO
	}
	return h.produce(b)
}
