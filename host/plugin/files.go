package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// beforeOpen, when set by a test, runs after a guest path is checked and
// before anything under its root is opened: the window a swapped symlink
// would need.
var beforeOpen func()

// fileRoots is the read-only view of the granted directories. Every access
// goes through the root's os.Root, which opens each component of the path
// relative to the one before and refuses a symlink leading out of the root
// (or to an absolute target), so nothing swapped in between a check and
// an open can escape: there is no check-then-open by name.
type fileRoots struct {
	roots      []string   // as granted, cleaned: what the guest sees
	open       []*os.Root // the same, opened at grant time
	maxBytes   int64
	maxEntries int
}

func newFileRoots(granted []string, maxBytes int64, maxEntries int) (*fileRoots, error) {
	fr := &fileRoots{maxBytes: maxBytes, maxEntries: maxEntries}
	for _, g := range granted {
		if !filepath.IsAbs(g) {
			fr.close()
			return nil, fmt.Errorf("files: root %q is not absolute", g)
		}
		clean := filepath.Clean(g)
		r, err := os.OpenRoot(clean)
		if err != nil {
			fr.close()
			return nil, fmt.Errorf("files: root: %w", err)
		}
		fr.roots = append(fr.roots, clean)
		fr.open = append(fr.open, r)
	}
	return fr, nil
}

func (fr *fileRoots) close() error {
	var errs []error
	for _, r := range fr.open {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// errno values of locate and the file operations, with a reason for
// denials.
type fileErr struct {
	errno  int32
	reason denyReason // for ErrnoDenied
}

// locate maps a guest path (absolute, slash-separated) to the granted root
// it names (the innermost, when roots nest) and the path relative to it.
// It refuses NUL bytes, relative paths, any ".." segment and paths outside
// the roots; symlinks are the os.Root's to refuse.
func (fr *fileRoots) locate(guest string) (root *os.Root, rel, clean string, fe *fileErr) {
	switch {
	case guest == "" || strings.IndexByte(guest, 0) >= 0:
		return nil, "", "", &fileErr{abi.ErrnoInvalid, ""}
	case !strings.HasPrefix(guest, "/"):
		return nil, "", "", &fileErr{abi.ErrnoDenied, denyRelative}
	}
	for _, seg := range strings.Split(guest, "/") {
		if seg == ".." {
			return nil, "", "", &fileErr{abi.ErrnoDenied, denyDotDot}
		}
	}
	clean = filepath.Clean(filepath.FromSlash(guest))
	best := -1
	for i, r := range fr.roots {
		if under(clean, r) && (best < 0 || len(r) > len(fr.roots[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, "", "", &fileErr{abi.ErrnoDenied, denyOutsideRoots}
	}
	rel, err := filepath.Rel(fr.roots[best], clean)
	if err != nil {
		return nil, "", "", &fileErr{abi.ErrnoDenied, denyOutsideRoots}
	}
	if beforeOpen != nil {
		beforeOpen()
	}
	return fr.open[best], rel, clean, nil
}

// under reports whether the clean path p is root or lies below it.
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// openErr classifies an error of an os.Root operation: a missing file, a
// symlink the root refused (os.Root reports it with an error of its own,
// not an errno), or an I/O failure.
func openErr(err error) *fileErr {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &fileErr{abi.ErrnoNotFound, ""}
	case errors.As(err, &errno):
		return &fileErr{abi.ErrnoIO, ""}
	}
	return &fileErr{abi.ErrnoDenied, denyEscape}
}

// read returns the content of a regular file inside the roots.
func (fr *fileRoots) read(guest string) ([]byte, *fileErr) {
	root, rel, _, fe := fr.locate(guest)
	if fe != nil {
		return nil, fe
	}
	// Non-blocking, so a fifo does not hang the open; what was opened is
	// then checked through the descriptor itself.
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return nil, openErr(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if fe := checkRegular(info); fe != nil {
		return nil, fe
	}
	if info.Size() > fr.maxBytes {
		return nil, &fileErr{abi.ErrnoTooLarge, ""}
	}
	b, err := io.ReadAll(io.LimitReader(f, fr.maxBytes+1))
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if int64(len(b)) > fr.maxBytes {
		return nil, &fileErr{abi.ErrnoTooLarge, ""}
	}
	return b, nil
}

// checkRegular refuses anything but a regular file with one link: a hard
// link inside a root to a file outside it cannot be told apart from the
// file itself, so multiply linked files are refused.
func checkRegular(info fs.FileInfo) *fileErr {
	if !info.Mode().IsRegular() {
		return &fileErr{abi.ErrnoDenied, denyNotRegular}
	}
	if linkCount(info) > 1 {
		return &fileErr{abi.ErrnoDenied, denyHardLinks}
	}
	return nil
}

func (fr *fileRoots) info(guestPath string, info fs.FileInfo) abi.FileInfo {
	fi := abi.FileInfo{
		Path:    filepath.ToSlash(guestPath),
		Name:    filepath.Base(guestPath),
		Dir:     info.IsDir(),
		ModTime: info.ModTime().UTC().Format(time.RFC3339),
	}
	if !fi.Dir {
		fi.Size = info.Size()
	}
	return fi
}

// stat describes a regular file or a directory inside the roots, symlinks
// inside the root followed.
func (fr *fileRoots) stat(guest string) (*abi.FileInfo, *fileErr) {
	root, rel, clean, fe := fr.locate(guest)
	if fe != nil {
		return nil, fe
	}
	info, err := root.Stat(rel)
	if err != nil {
		return nil, openErr(err)
	}
	if !info.IsDir() {
		if fe := checkRegular(info); fe != nil {
			return nil, fe
		}
	}
	fi := fr.info(clean, info)
	return &fi, nil
}

// list describes the regular files and directories in a directory inside
// the roots; symlinks are described by what they point to when that is
// inside the root, and left out otherwise, as are special files.
func (fr *fileRoots) list(guest string) ([]abi.FileInfo, *fileErr) {
	root, rel, clean, fe := fr.locate(guest)
	if fe != nil {
		return nil, fe
	}
	d, err := root.Open(rel)
	if err != nil {
		return nil, openErr(err)
	}
	defer d.Close()
	info, err := d.Stat()
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if !info.IsDir() {
		return nil, &fileErr{abi.ErrnoInvalid, ""}
	}
	// One more than the limit tells an over-full directory apart.
	entries, err := d.ReadDir(fr.maxEntries + 1)
	if err != nil && err != io.EOF {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if len(entries) > fr.maxEntries {
		return nil, &fileErr{abi.ErrnoTooLarge, ""}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	out := make([]abi.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := root.Stat(filepath.Join(rel, e.Name()))
		if err != nil || (!info.IsDir() && checkRegular(info) != nil) {
			continue
		}
		out = append(out, fr.info(filepath.Join(clean, e.Name()), info))
	}
	return out, nil
}

func fileCaps(st *callState, stack []uint64) *fileRoots {
	c := st.caps
	if c == nil || c.files == nil {
		st.denied(stack, abi.CapFiles, denyNotGranted)
		return nil
	}
	return c.files
}

func (st *callState) fileFail(stack []uint64, fe *fileErr) {
	if fe.errno == abi.ErrnoDenied {
		st.denied(stack, abi.CapFiles, fe.reason)
		return
	}
	setRet(stack, fe.errno)
}

func guestPath(fn string, st *callState, mem Memory, stack []uint64) (string, bool) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	checkRange(fn, mem, ptr, n)
	if fileCaps(st, stack) == nil {
		return "", false
	}
	if n > maxPathBytes {
		setRet(stack, abi.ErrnoTooLarge)
		return "", false
	}
	return string(guestBytes(fn, mem, ptr, n)), true
}

func hostFileRead(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncFileRead
	st := mustState(ctx, fn)
	p, ok := guestPath(fn, st, mem, stack)
	if !ok {
		return
	}
	b, fe := st.caps.files.read(p)
	if fe != nil {
		st.fileFail(stack, fe)
		return
	}
	st.setOutput(stack, b)
}

func hostFileStat(ctx context.Context, mem Memory, stack []uint64) {
	fileJSON(ctx, abi.FuncFileStat, mem, stack, (*fileRoots).stat)
}

func hostFileList(ctx context.Context, mem Memory, stack []uint64) {
	fileJSON(ctx, abi.FuncFileList, mem, stack, (*fileRoots).list)
}

// fileJSON serves a file host function whose output is op's answer for
// the guest's path, as JSON.
func fileJSON[T any](ctx context.Context, fn string, mem Memory, stack []uint64, op func(*fileRoots, string) (T, *fileErr)) {
	st := mustState(ctx, fn)
	p, ok := guestPath(fn, st, mem, stack)
	if !ok {
		return
	}
	v, fe := op(st.caps.files, p)
	if fe != nil {
		st.fileFail(stack, fe)
		return
	}
	b, _ := json.Marshal(v)
	st.setOutput(stack, b)
}

func hostFileRoots(ctx context.Context, mem Memory, stack []uint64) {
	const fn = abi.FuncFileRoots
	st := mustState(ctx, fn)
	fr := fileCaps(st, stack)
	if fr == nil {
		return
	}
	roots := make([]string, len(fr.roots))
	for i, r := range fr.roots {
		roots[i] = filepath.ToSlash(r)
	}
	b, _ := json.Marshal(roots)
	st.setOutput(stack, b)
}
