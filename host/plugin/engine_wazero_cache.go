package plugin

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// The rewritten-module cache keeps, beside wazero's compilation cache, every
// plugin file as the interrupt rewrite made it (package interrupt), so
// that compiling a file again (a wake-up, new limits, a restart whose
// metadata cache missed) costs wazero's own decode, validation and
// compiled-code load, not the rewrite too (a quarter of a Go guest's
// wake-up). It lives in <cacheDir>/interrupt, one file per plugin file,
// named by the file's sha256; its header names what the bytes derive
// from: the entry format, the file's digest and the corral binary's
// digest (another build may rewrite differently). A newer build overwrites
// the entry of an older one, so the directory holds one entry per plugin
// file whatever the upgrades.
//
// The entry is trusted as wazero's compiled code beside it is: both live
// in the cache directory that nobody else may write (0700), and a forged
// entry could drop the interrupt checks as forged native code could do
// anything. The checksum is against damage (a full disk, a bad copy): an
// entry that does not read back whole, names another file or build, or
// fails its CRC is removed and the file rewritten again.

// rewriteFormat is the version of a rewritten-module entry's layout.
const rewriteFormat = 1

// rewriteMagic opens every entry.
var rewriteMagic = [8]byte{'c', 'o', 'r', 'r', 'a', 'l', 'R', 'W'}

// rewriteHeader precedes the rewritten module in an entry; all integers
// little-endian.
type rewriteHeader struct {
	Magic  [8]byte
	Format uint32
	Host   [32]byte // sha256 of the corral binary that rewrote
	Source [32]byte // sha256 of the plugin file
	Length uint64   // of the rewritten module that follows
	CRC    uint32   // Castagnoli CRC-32 of the rewritten module
}

var rewriteHeaderSize = binary.Size(rewriteHeader{})

// rewriteCache is a directory of rewritten modules; its zero value (no
// directory) rewrites every time.
type rewriteCache struct {
	dir  string        // "" without a cache
	host func() string // the corral binary's sha256 (hex), "" when unknown
	log  *slog.Logger
}

// get returns the rewrite of the plugin file whose sha256 (hex) is
// digest, if its entry holds it; a bad entry is removed. An empty digest
// is never cached.
func (c rewriteCache) get(digest string) ([]byte, bool) {
	file, key, ok := c.entry(digest)
	if !ok {
		return nil, false
	}
	out, err := readRewrite(file, key)
	if err == nil {
		return out, true
	}
	if errors.Is(err, errOtherBuild) {
		c.log.Debug("rewritten-module cache entry of another build; the plugin file is rewritten for this one", "entry", file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		c.log.Warn("rewritten-module cache entry discarded; the plugin file is rewritten again", "entry", file, "err", err)
		_ = os.Remove(file)
	}
	return nil, false
}

// put stores out as the rewrite of the file whose digest it is; a cache
// that cannot be written costs a rewrite at the next compile.
func (c rewriteCache) put(digest string, out []byte) {
	file, key, ok := c.entry(digest)
	if !ok {
		return
	}
	if err := writeRewrite(file, key, out); err != nil {
		c.log.Warn("rewritten-module cache entry not written", "entry", file, "err", err)
	}
}

// entry returns the file and header key of digest's entry; ok is false
// when there is no cache, or no digest to key it by.
func (c rewriteCache) entry(digest string) (file string, key rewriteHeader, ok bool) {
	if c.dir == "" || c.host == nil {
		return "", key, false
	}
	src, err := hex.DecodeString(digest)
	host, herr := hex.DecodeString(c.host())
	if err != nil || herr != nil || len(src) != 32 || len(host) != 32 {
		return "", key, false
	}
	key = rewriteHeader{Magic: rewriteMagic, Format: rewriteFormat}
	copy(key.Source[:], src)
	copy(key.Host[:], host)
	return filepath.Join(c.dir, digest+".wasm"), key, true
}

// errOtherBuild is an entry another corral binary wrote: every entry is
// one after an upgrade, so it is replaced without a warning.
var errOtherBuild = errors.New("entry of another build of corral")

// readRewrite returns the rewritten module of the entry in file, whose
// header must match key but for its length and CRC.
func readRewrite(file string, key rewriteHeader) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var h rewriteHeader
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	switch {
	case h.Magic != key.Magic || h.Format != key.Format:
		return nil, fmt.Errorf("not an entry of format %d", key.Format)
	case h.Source != key.Source:
		return nil, errors.New("entry of another plugin file")
	case h.Host != key.Host:
		return nil, errOtherBuild
	}
	out := b[rewriteHeaderSize:]
	if uint64(len(out)) != h.Length {
		return nil, fmt.Errorf("%d bytes of a module of %d", len(out), h.Length)
	}
	if crc32.Checksum(out, castagnoli) != h.CRC {
		return nil, errors.New("checksum mismatch")
	}
	return out, nil
}

// writeRewrite stores the rewritten module out under key in file, through
// a temporary file and a rename.
func writeRewrite(file string, key rewriteHeader, out []byte) error {
	key.Length = uint64(len(out))
	key.CRC = crc32.Checksum(out, castagnoli)
	var buf bytes.Buffer
	buf.Grow(rewriteHeaderSize + len(out))
	if err := binary.Write(&buf, binary.LittleEndian, key); err != nil {
		return err
	}
	buf.Write(out)
	return atomicfile.Write(file, buf.Bytes(), 0o600)
}
