package plugin

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
)

// kvLogName is the file of a plugin's store under its data directory;
// kvLegacyName is the whole-store JSON file corral wrote before.
const (
	kvLogName    = "kv.log"
	kvLegacyName = "kv.json"
)

// The log starts with a header naming its format, kvMagic and the
// version (uint32, little endian; kvVersion), then holds a sequence of
// records, each
//
//	length  uint32, little endian: the bytes of the payload
//	crc     uint32, little endian: CRC-32C of the payload
//	payload op (1 set, 2 delete), uvarint key length, key, value (set)
//
// Keys and values are bytes, exactly. Reading stops at the first record
// that is cut short or fails its checksum (a write torn by a crash): that
// tail is dropped and the file truncated before anything is appended.
// A log of another version is refused, not read: a newer corral may have
// changed the records. A log without the header is the headerless format
// corral wrote before (version 0): it is read and rewritten with one.
const (
	kvMagic      = "CORRALKV"
	kvVersion    = 1
	kvFileHeader = len(kvMagic) + 4

	kvOpSet    = 1
	kvOpDelete = 2

	kvHeader = 8
	// kvCompactMin is the dead weight (bytes of superseded records) a log
	// may carry before it is compacted, whatever the live size.
	kvCompactMin = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// kvLog is the file behind a MemoryStore. Its methods are called with the
// store's lock held.
type kvLog struct {
	path string
	f    *os.File // nil once closed
	size int64    // bytes of the file, all of them good records
	live int64    // bytes of the records that hold the current entries
}

// recordSize is the length of the set record of key and value.
func recordSize(key string, value []byte) int64 {
	return int64(kvHeader + 1 + uvarintLen(len(key)) + len(key) + len(value))
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

func appendRecord(b []byte, op byte, key string, value []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, op)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = append(b, value...)
	payload := b[start+kvHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// openKVLog opens the log at path, or creates it (from the legacy JSON
// file beside it if there is one), and loads its entries into data.
func openKVLog(path string, data map[string][]byte) (*kvLog, error) {
	l := &kvLog{path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := l.migrate(data); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("kv: %w", err)
	case bytes.HasPrefix(b, []byte(kvMagic)) && len(b) >= kvFileHeader:
		if v := binary.LittleEndian.Uint32(b[len(kvMagic):]); v != kvVersion {
			return nil, fmt.Errorf("kv: %s is in format version %d; this corral reads version %d (was it written by a newer corral?)", path, v, kvVersion)
		}
		l.size = int64(kvFileHeader) + replay(b[kvFileHeader:], data)
	case len(b) > 0:
		// The headerless log of version 0: read, then rewritten with the
		// header.
		replay(b, data)
		size, err := l.rewrite(data)
		if err != nil {
			return nil, err
		}
		l.size, b = size, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	l.f = f
	if l.size < int64(len(b)) { // a torn tail: drop it before appending
		if err := f.Truncate(l.size); err != nil {
			f.Close()
			return nil, fmt.Errorf("kv: %s: truncate a torn record: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("kv: %w", err)
		}
	}
	if l.size == 0 { // a new log, or one whose header was torn: write the header
		_, werr := f.WriteAt(kvHeaderBytes(), 0)
		terr := f.Truncate(int64(kvFileHeader))
		if err := errors.Join(werr, terr, f.Sync()); err != nil {
			f.Close()
			return nil, fmt.Errorf("kv: %s: header: %w", path, err)
		}
		l.size = int64(kvFileHeader)
	}
	l.live = int64(kvFileHeader)
	for k, v := range data {
		l.live += recordSize(k, v)
	}
	return l, nil
}

// kvHeaderBytes is the header a log starts with.
func kvHeaderBytes() []byte {
	return binary.LittleEndian.AppendUint32([]byte(kvMagic), kvVersion)
}

// replay applies the good records of b to data and returns their length.
func replay(b []byte, data map[string][]byte) int64 {
	var off int64
	for len(b) >= kvHeader {
		n := binary.LittleEndian.Uint32(b)
		sum := binary.LittleEndian.Uint32(b[4:])
		if uint64(n) > uint64(len(b)-kvHeader) || n == 0 {
			break
		}
		payload := b[kvHeader : kvHeader+int(n)]
		if crc32.Checksum(payload, castagnoli) != sum {
			break
		}
		klen, w := binary.Uvarint(payload[1:])
		if w <= 0 || klen > uint64(len(payload)-1-w) {
			break
		}
		key := string(payload[1+w : 1+w+int(klen)])
		switch payload[0] {
		case kvOpSet:
			data[key] = append([]byte(nil), payload[1+w+int(klen):]...)
		case kvOpDelete:
			delete(data, key)
		default:
			return off
		}
		off += int64(kvHeader + int(n))
		b = b[kvHeader+int(n):]
	}
	return off
}

// migrate loads the legacy JSON store beside the log, if any, writes its
// entries as a new log and removes it.
func (l *kvLog) migrate(data map[string][]byte) error {
	legacy := filepath.Join(filepath.Dir(l.path), kvLegacyName)
	b, err := os.ReadFile(legacy)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return fmt.Errorf("kv: %s: %w", legacy, err)
	}
	size, err := l.rewrite(data)
	if err != nil {
		return err
	}
	l.size = size
	if err := os.Remove(legacy); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}

// rewrite writes data as a fresh log (a temporary file synced, then
// renamed over the log and the directory synced) and returns its size.
func (l *kvLog) rewrite(data map[string][]byte) (int64, error) {
	buf := kvHeaderBytes()
	for k, v := range data {
		buf = appendRecord(buf, kvOpSet, k, v)
	}
	if err := atomicfile.WriteDurable(l.path, buf, 0o600); err != nil {
		return 0, fmt.Errorf("kv: %w", err)
	}
	return int64(len(buf)), nil
}

// append writes one record at the end of the log and syncs it. A failed
// write is cut off again, so the log never holds a torn record before a
// good one.
func (l *kvLog) append(rec []byte) error {
	if l.f == nil {
		return errors.New("kv: store closed")
	}
	if _, err := l.f.WriteAt(rec, l.size); err != nil {
		l.f.Truncate(l.size)
		return fmt.Errorf("kv: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		l.f.Truncate(l.size)
		return fmt.Errorf("kv: %w", err)
	}
	l.size += int64(len(rec))
	return nil
}

// set logs key = value; old is the value it replaces, if had.
func (l *kvLog) set(key string, value, old []byte, had bool) error {
	if err := l.append(appendRecord(nil, kvOpSet, key, value)); err != nil {
		return err
	}
	l.live += recordSize(key, value)
	if had {
		l.live -= recordSize(key, old)
	}
	return nil
}

// delete logs the removal of key, whose value was old.
func (l *kvLog) delete(key string, old []byte) error {
	if err := l.append(appendRecord(nil, kvOpDelete, key, nil)); err != nil {
		return err
	}
	l.live -= recordSize(key, old)
	return nil
}

// compact rewrites the log with the entries of data (the store's content)
// once its dead records outweigh the live ones and kvCompactMin: over
// time each write then costs at most about twice its own record. A failed
// compaction leaves the longer, still valid log in place.
func (l *kvLog) compact(data map[string][]byte) {
	if dead := l.size - l.live; dead <= l.live || dead <= kvCompactMin || l.f == nil {
		return
	}
	size, err := l.rewrite(data)
	if err != nil {
		return
	}
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	l.f.Close()
	l.f = nil // on failure, later writes fail; a reopen reads the new log
	if err != nil {
		return
	}
	l.f, l.size, l.live = f, size, size
}

func (l *kvLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}
