package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// The metadata cache keeps, for every plugin file described, what a start
// needs to serve it without compiling or instantiating it: its manifest as
// describe answered it and its ABI minor. It lives in RuntimeConfig.MetaDir
// (corral serve: plugins.cacheDir/meta), one file per entry, named by the sha256 of everything the
// description depends on: the file's digest, this corral binary (its own
// digest: another build may parse or check a manifest differently), the
// engine and memory limit it was described under, and the compile limits
// the file passed. An entry is three lines: its key (format version and
// key fields, the JSON its name is the sha256 of), its ABI minor, then the
// manifest as describe answered it; reading it back compares the key's
// bytes and parses the manifest once. One that does not read back, names
// another key or holds a manifest this corral refuses is removed, and the
// file compiled and described again.

// metaFormat is the format of a metadata cache entry (1: one JSON object
// holding the manifest; 2: a JSON header line, then the manifest; 3: the
// key, the minor and the manifest, a line each).
const metaFormat = 3

// metaEntry is one metadata cache entry: its key fields, its minor and its
// manifest.
type metaEntry struct {
	Format   int           `json:"format"`
	Digest   string        `json:"digest"`
	Host     string        `json:"host"`
	Engine   string        `json:"engine"`
	Pages    uint32        `json:"pages"`
	Fuel     uint64        `json:"fuel"`
	Limits   CompileLimits `json:"limits"`
	Minor    uint32        `json:"-"`
	Manifest []byte        `json:"-"`
}

// File is a plugin file to open: its path and, when the caller has them,
// its content and the content's sha256.
type File struct {
	Path string
	// Data is the content; nil makes Open read Path when it must compile,
	// checking the bytes against Digest.
	Data []byte
	// Digest is the sha256 (lowercase hex) of the content; "" makes Open
	// hash Data. It is required when Data is nil.
	Digest string
}

// Open returns the described module of the plugin file f. When the
// metadata cache holds this file's description for this corral, engine
// and limits, nothing is compiled or instantiated (nor, with f.Data nil,
// read): the module's plugins start asleep (or compile when they load,
// with SleepAfter zero). Otherwise Open compiles and describes it as
// CompileFile and Describe do, and records the description.
func (r *Runtime) Open(ctx context.Context, f File, cfg Config) (*Module, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	defer r.rel.note() // what reading and describing it left is garbage
	switch {
	case f.Digest != "":
	case f.Data != nil:
		sum := sha256.Sum256(f.Data)
		f.Digest = hex.EncodeToString(sum[:])
	default:
		return nil, fmt.Errorf("%w: open %s: neither its content nor its digest", ErrHost, f.Path)
	}
	e := r.metaKey(f.Digest, r.keyFor(cfg))
	if m := r.cachedModule(f.Path, e); m != nil {
		return m, nil
	}
	data := f.Data
	if data == nil {
		if data, err = os.ReadFile(f.Path); err != nil {
			return nil, fmt.Errorf("%w: read: %w", ErrHost, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Digest {
			return nil, fmt.Errorf("the plugin file changed while it was loaded (sha256 %s expected): its new content loads at the next scan", f.Digest[:min(12, len(f.Digest))])
		}
	}
	// The module reads the file again when it must: its closure holds the
	// path alone, not f, whose Data would stay live as long as the module.
	path := f.Path
	m, err := r.compileModule(ctx, data, f.Digest, cfg, func() ([]byte, error) { return os.ReadFile(path) })
	if err != nil {
		return nil, err
	}
	if _, err := r.Describe(ctx, m, cfg); err != nil {
		_ = m.Close(ctx)
		return nil, err
	}
	r.storeMeta(e, m)
	if cfg.SleepAfter > 0 {
		m.expireHeld(cfg.SleepAfter)
	}
	return m, nil
}

// metaKey returns the entry for digest described under k, without its
// description.
func (r *Runtime) metaKey(digest string, k engineKey) metaEntry {
	return metaEntry{Format: metaFormat, Digest: digest, Host: r.hostDigest(), Engine: k.name, Pages: k.pages, Fuel: k.fuel, Limits: r.cfg.Compile}
}

// metaPath returns the file of e and its key's JSON, "" when there is no
// metadata cache.
func (r *Runtime) metaPath(e metaEntry) (string, []byte) {
	if r.cfg.MetaDir == "" || e.Host == "" {
		return "", nil
	}
	key, _ := json.Marshal(e) // the key fields alone
	sum := sha256.Sum256(key)
	return filepath.Join(r.cfg.MetaDir, hex.EncodeToString(sum[:])+".json"), key
}

// encodeMeta returns the content of e's entry, whose key's JSON is key.
func encodeMeta(key []byte, e metaEntry) []byte {
	b := append(append(make([]byte, 0, len(key)+len(e.Manifest)+12), key...), '\n')
	b = strconv.AppendUint(b, uint64(e.Minor), 10)
	return append(append(b, '\n'), e.Manifest...)
}

// decodeMeta returns the minor and manifest of the entry b, whose key's
// JSON must be key.
func decodeMeta(key, b []byte) (uint32, []byte, error) {
	got, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok || !bytes.Equal(got, key) {
		return 0, nil, errors.New("entry of another format, file, corral, engine or limits")
	}
	minor, manifest, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return 0, nil, errors.New("no manifest after the entry's minor")
	}
	n, err := strconv.ParseUint(string(minor), 10, 32)
	if err != nil {
		return 0, nil, fmt.Errorf("minor: %w", err)
	}
	return uint32(n), manifest, nil
}

// cachedModule returns the module described by want's entry, nil when
// there is none that this corral accepts (a bad one is removed).
func (r *Runtime) cachedModule(path string, want metaEntry) *Module {
	file, key := r.metaPath(want)
	if file == "" {
		return nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	got := want
	if err == nil {
		got.Minor, got.Manifest, err = decodeMeta(key, b)
	}
	var m *Module
	if err == nil {
		m, err = r.moduleOf(path, got)
	}
	if err != nil {
		r.log.Warn("plugin metadata cache entry discarded; the file is compiled and described again", "file", path, "entry", file, "err", err)
		_ = os.Remove(file)
		return nil
	}
	return m
}

// moduleOf returns the module of the file at path described by e.
func (r *Runtime) moduleOf(path string, e metaEntry) (*Module, error) {
	man, _, err := parseManifest(e.Manifest)
	if err != nil {
		return nil, err
	}
	return &Module{rt: r, digest: e.Digest, read: func() ([]byte, error) { return os.ReadFile(path) },
		manifest: man, minor: e.Minor}, nil
}

// storeMeta records m's description as e's entry, through a temporary
// file and a rename; a cache that cannot be written costs a compile at
// the next start.
func (r *Runtime) storeMeta(e metaEntry, m *Module) {
	m.mu.Lock()
	e.Minor, e.Manifest = m.minor, m.raw
	m.raw = nil // describe's answer is kept for this entry only
	m.mu.Unlock()
	file, key := r.metaPath(e)
	if file == "" || e.Manifest == nil {
		return
	}
	if err := atomicfile.Write(file, encodeMeta(key, e), 0o600); err != nil {
		r.log.Warn("plugin metadata cache not written", "entry", file, "err", err)
	}
}

// hostDigest returns the sha256 of the running executable, "" when it
// cannot be read (there is then no metadata cache).
func (r *Runtime) hostDigest() string {
	r.hostOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return
		}
		r.host = hex.EncodeToString(h.Sum(nil))
	})
	return r.host
}
