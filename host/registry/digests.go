package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// The digest record (Options.DigestFile) remembers the sha256 of every
// plugin file by the file's identity, so that a start over unchanged files
// reads none of them: with the metadata cache (host/plugin) a file whose
// digest is known is served without a byte of it read, and hashing 100 Go
// guests of 4 MB each was half of such a start's CPU.
//
// The rule: a file's digest is taken from the record only when the file
// has the same device, inode, size, modification time and change time (to
// the nanosecond) as the one that was read and hashed. Every write to a
// file, a truncation, a rename over it (another inode), a chmod and a
// touch set its change time to the current time, which no program can set
// back, so a file replaced or rewritten in place, even to the same size
// with its modification time restored, is read and hashed again. A file
// system keeps times in ticks (a jiffy on Linux; up to 2 s on some), and a
// write in the tick of the read that hashed a file could leave both times
// unchanged: so, as git does for its index, no record is made for a file
// whose times are not at least racyWindow older than that read (it is
// hashed again at the next start instead). What the rule cannot see: a
// file changed below the file system (a block device written directly, an
// image edited offline) or a system clock set back to the very nanosecond.
// Under a trust policy every file is read anyway: a signature is checked
// against the bytes.

// racyWindow is how much older than the read that hashed it a file's
// times must be for its digest to be recorded.
const racyWindow = 2 * time.Second

// digestFormat is the format of the digest record.
const digestFormat = 1

// fileID identifies one content of a file without reading it (fileIDOf).
type fileID struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"` // ns since the epoch
	Ctime int64  `json:"ctime"` // ns since the epoch
}

type digestRecord struct {
	ID     fileID `json:"id"`
	Digest string `json:"digest"`
}

type digestFile struct {
	Format int                     `json:"format"`
	Files  map[string]digestRecord `json:"files"`
}

// digests is the digest record of one registry; the zero path keeps none.
type digests struct {
	path   string
	log    *slog.Logger
	window time.Duration // racyWindow; shorter in tests

	mu    sync.Mutex
	files map[string]digestRecord
	dirty bool
}

// openDigests reads the record at path ("" keeps none). A record that does
// not read back is logged and started afresh: it costs one read of every
// file.
func openDigests(path string, log *slog.Logger) *digests {
	d := &digests{path: path, log: log, window: racyWindow, files: map[string]digestRecord{}}
	if path == "" {
		return d
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d
	}
	var f digestFile
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err == nil && f.Format != digestFormat {
		err = fmt.Errorf("format %d, want %d", f.Format, digestFormat)
	}
	if err != nil {
		log.Warn("plugin digest record discarded; every plugin file is read and hashed again", "file", path, "err", err)
		d.dirty = true
		return d
	}
	if f.Files != nil {
		d.files = f.Files
	}
	return d
}

// lookup returns the recorded digest of the file at path if it is still
// the file id says, "" otherwise.
func (d *digests) lookup(path string, id fileID) string {
	if d.path == "" {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if rec, ok := d.files[path]; ok && rec.ID == id {
		return rec.Digest
	}
	return ""
}

// record remembers digest for the file at path as id, read at readAt,
// unless its times are too close to that read to tell a later write apart
// (racyWindow).
func (d *digests) record(path string, id fileID, digest string, readAt time.Time) {
	if d.path == "" {
		return
	}
	limit := readAt.Add(-d.window).UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	if id.Mtime >= limit || id.Ctime >= limit {
		if _, ok := d.files[path]; ok {
			delete(d.files, path)
			d.dirty = true
		}
		return
	}
	if rec, ok := d.files[path]; !ok || rec != (digestRecord{id, digest}) {
		d.files[path] = digestRecord{id, digest}
		d.dirty = true
	}
}

// flush writes the record if it changed, keeping only the files present
// reports, through a temporary file and a rename. A record that cannot be
// written costs a read of every file at the next start.
func (d *digests) flush(present func(path string) bool) {
	if d.path == "" {
		return
	}
	d.mu.Lock()
	for path := range d.files {
		if !present(path) {
			delete(d.files, path)
			d.dirty = true
		}
	}
	if !d.dirty {
		d.mu.Unlock()
		return
	}
	b, err := json.Marshal(digestFile{Format: digestFormat, Files: d.files})
	d.dirty = false
	d.mu.Unlock()
	if err == nil {
		err = atomicfile.Write(d.path, b, 0o600)
	}
	if err != nil {
		d.mu.Lock()
		d.dirty = true
		d.mu.Unlock()
		d.log.Warn("plugin digest record not written", "file", d.path, "err", err)
	}
}
