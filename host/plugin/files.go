package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// fileRoots is the read-only view of the granted directories.
type fileRoots struct {
	roots      []string // as granted, cleaned: what the guest sees
	real       []string // the same with symlinks resolved
	maxBytes   int64
	maxEntries int
}

func newFileRoots(granted []string, maxBytes int64, maxEntries int) (*fileRoots, error) {
	fr := &fileRoots{maxBytes: maxBytes, maxEntries: maxEntries}
	for _, g := range granted {
		if !filepath.IsAbs(g) {
			return nil, fmt.Errorf("files: root %q is not absolute", g)
		}
		clean := filepath.Clean(g)
		real, err := filepath.EvalSymlinks(clean)
		if err != nil {
			return nil, fmt.Errorf("files: root: %w", err)
		}
		info, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("files: root: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("files: root %q is not a directory", g)
		}
		fr.roots = append(fr.roots, clean)
		fr.real = append(fr.real, real)
	}
	return fr, nil
}

func within(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// errno values of resolve, with a reason for denials.
type fileErr struct {
	errno  int32
	reason denyReason // for ErrnoDenied
}

// resolve maps a guest path (absolute, slash-separated) to a real path
// inside a root. It refuses NUL bytes, relative paths, any ".." segment,
// paths outside the roots, and symlinks that lead outside them.
func (fr *fileRoots) resolve(guest string) (clean, real string, fe *fileErr) {
	switch {
	case guest == "" || strings.IndexByte(guest, 0) >= 0:
		return "", "", &fileErr{abi.ErrnoInvalid, ""}
	case !strings.HasPrefix(guest, "/"):
		return "", "", &fileErr{abi.ErrnoDenied, denyRelative}
	}
	for _, seg := range strings.Split(guest, "/") {
		if seg == ".." {
			return "", "", &fileErr{abi.ErrnoDenied, denyDotDot}
		}
	}
	clean = filepath.Clean(filepath.FromSlash(guest))
	if !within(clean, fr.roots) {
		return "", "", &fileErr{abi.ErrnoDenied, denyOutsideRoots}
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", &fileErr{abi.ErrnoNotFound, ""}
		}
		return "", "", &fileErr{abi.ErrnoIO, ""}
	}
	if !within(real, fr.real) {
		return "", "", &fileErr{abi.ErrnoDenied, denyEscape}
	}
	return clean, real, nil
}

// read returns the content of a regular file inside the roots.
func (fr *fileRoots) read(guest string) ([]byte, *fileErr) {
	_, real, fe := fr.resolve(guest)
	if fe != nil {
		return nil, fe
	}
	info, err := os.Lstat(real)
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if fe := checkRegular(info); fe != nil {
		return nil, fe
	}
	if info.Size() > fr.maxBytes {
		return nil, &fileErr{abi.ErrnoTooLarge, ""}
	}
	f, err := openNoFollow(real)
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	defer f.Close()
	// The path may have been swapped since Lstat: check the open file is
	// the one we vetted.
	finfo, err := f.Stat()
	if err != nil || !os.SameFile(info, finfo) || !finfo.Mode().IsRegular() {
		return nil, &fileErr{abi.ErrnoDenied, "file changed while opening"}
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
		Name:    info.Name(),
		Dir:     info.IsDir(),
		ModTime: info.ModTime().UTC().Format(time.RFC3339),
	}
	if !fi.Dir {
		fi.Size = info.Size()
	}
	return fi
}

// stat describes a regular file or a directory inside the roots.
func (fr *fileRoots) stat(guest string) (*abi.FileInfo, *fileErr) {
	clean, real, fe := fr.resolve(guest)
	if fe != nil {
		return nil, fe
	}
	info, err := os.Lstat(real)
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if !info.IsDir() {
		if fe := checkRegular(info); fe != nil {
			return nil, fe
		}
	}
	fi := fr.info(clean, info)
	fi.Name = filepath.Base(clean)
	return &fi, nil
}

// list describes the regular files and directories in a directory inside
// the roots; symlinks are described by what they point to when that is
// inside the roots, and left out otherwise, as are special files.
func (fr *fileRoots) list(guest string) ([]abi.FileInfo, *fileErr) {
	clean, real, fe := fr.resolve(guest)
	if fe != nil {
		return nil, fe
	}
	info, err := os.Lstat(real)
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if !info.IsDir() {
		return nil, &fileErr{abi.ErrnoInvalid, ""}
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil, &fileErr{abi.ErrnoIO, ""}
	}
	if len(entries) > fr.maxEntries {
		return nil, &fileErr{abi.ErrnoTooLarge, ""}
	}
	out := make([]abi.FileInfo, 0, len(entries))
	for _, e := range entries {
		child := path.Join(filepath.ToSlash(clean), e.Name())
		fi, fe := fr.stat(child)
		if fe != nil {
			continue
		}
		fi.Name = e.Name()
		out = append(out, *fi)
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
