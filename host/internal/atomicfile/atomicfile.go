// Package atomicfile replaces whole files so that a reader sees either the
// old content or the new one, never a part: the bytes go to a temporary
// file in the same directory, which is then renamed over the target.
//
// Every cache and record corral keeps on disk is written this way (the
// metadata and rewrite caches, the plugin digest record, the OCI store and
// lock, wasmtime's artifacts, the cluster's plugin mirror, the key-value
// log's compaction).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with b, its mode perm. A missing directory is
// created with perm's read bits plus search (0600 gives 0700, 0644 gives
// 0755). The errors name the file; no temporary file is left behind.
func Write(path string, b []byte, perm fs.FileMode) error {
	return write(path, b, perm, false)
}

// WriteDurable is Write that also syncs the file before the rename, and
// the directory after it, so that the new content survives a crash once it
// returns (the directory's sync is best effort: it is past the rename, and
// some file systems refuse it). It costs two fsyncs: use it for data, not
// for caches.
func WriteDurable(path string, b []byte, perm fs.FileMode) error {
	return write(path, b, perm, true)
}

func write(path string, b []byte, perm fs.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirPerm(perm)); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	var serr error
	if durable && werr == nil {
		serr = tmp.Sync()
	}
	cerr := tmp.Close()
	err = errors.Join(werr, serr, cerr)
	if err == nil && perm != 0o600 { // CreateTemp makes the file 0600
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if durable {
		syncDir(dir)
	}
	return nil
}

// dirPerm is the mode of a directory created for a file of mode perm.
func dirPerm(perm fs.FileMode) fs.FileMode {
	perm &= fs.ModePerm
	return perm | (perm&0o444)>>2
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
