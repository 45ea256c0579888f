package notify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// DefaultMaxWatches caps the directories one FileWatcher watches.
const DefaultMaxWatches = 8192

// FileWatcher turns changes under granted file roots into resource
// updates, so that a plugin serving file:// URIs (plugins/files) need not
// poll: a file written, created, removed or renamed under a root yields
// notifications/resources/updated for its file:// URI and for its
// directory's, and a file created or removed also yields
// resources/list_changed. Directories are watched recursively (new ones
// as they appear), up to DefaultMaxWatches.
type FileWatcher struct {
	hub *Hub
	log *slog.Logger
	w   *fsnotify.Watcher

	mu      sync.Mutex
	roots   []string        // cleaned absolute roots
	watched map[string]bool // directories being watched
	full    bool            // the watch cap was hit (logged once)
}

// NewFileWatcher returns a watcher publishing to hub; log may be nil.
func NewFileWatcher(hub *Hub, log *slog.Logger) (*FileWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("notify: file watcher: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &FileWatcher{hub: hub, log: log, w: w, watched: map[string]bool{}}, nil
}

// SetRoots replaces the watched roots (absolute paths; others are
// ignored): new roots are walked and watched, dropped ones unwatched.
func (fw *FileWatcher) SetRoots(roots []string) {
	var clean []string
	for _, r := range roots {
		if filepath.IsAbs(r) {
			clean = append(clean, filepath.Clean(r))
		}
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if slices.Equal(clean, fw.roots) {
		return
	}
	fw.roots = clean
	for dir := range fw.watched {
		if !fw.underRootLocked(dir) {
			_ = fw.w.Remove(dir)
			delete(fw.watched, dir)
		}
	}
	for _, r := range clean {
		fw.addTreeLocked(r)
	}
}

// Roots returns the roots being watched.
func (fw *FileWatcher) Roots() []string {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return slices.Clone(fw.roots)
}

func (fw *FileWatcher) underRootLocked(p string) bool {
	for _, r := range fw.roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// addTreeLocked watches dir and every directory below it.
func (fw *FileWatcher) addTreeLocked(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				fw.log.Warn("notify: cannot watch root", "root", dir, "err", err)
			}
			return nil // skip what cannot be read
		}
		if !d.IsDir() {
			return nil
		}
		if fw.watched[p] {
			return nil
		}
		if len(fw.watched) >= DefaultMaxWatches {
			if !fw.full {
				fw.full = true
				fw.log.Warn("notify: too many directories to watch; changes below the rest are not reported", "max", DefaultMaxWatches)
			}
			return fs.SkipAll
		}
		if err := fw.w.Add(p); err != nil {
			fw.log.Debug("notify: watch", "dir", p, "err", err)
			return nil
		}
		fw.watched[p] = true
		return nil
	})
}

// Run publishes changes until ctx is done, then closes the watcher.
func (fw *FileWatcher) Run(ctx context.Context) error {
	defer fw.w.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.w.Events:
			if !ok {
				return nil
			}
			fw.handle(ev)
		case err, ok := <-fw.w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				fw.log.Warn("notify: file events overflowed; some changes were not reported")
				continue
			}
			fw.log.Debug("notify: file watcher", "err", err)
		}
	}
}

func (fw *FileWatcher) handle(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	fw.mu.Lock()
	if !fw.underRootLocked(p) {
		fw.mu.Unlock()
		return
	}
	structural := ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			fw.addTreeLocked(p)
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		for dir := range fw.watched {
			if dir == p || strings.HasPrefix(dir, p+string(filepath.Separator)) {
				delete(fw.watched, dir) // the kernel dropped the watch
			}
		}
	}
	fw.mu.Unlock()
	if !ev.Has(fsnotify.Write) && !structural {
		return // chmod alone changes nothing a reader sees
	}
	fw.hub.Publish(ResourceUpdated, FileURI(p))
	if structural {
		fw.hub.Publish(ResourceUpdated, FileURI(filepath.Dir(p)))
		fw.hub.Publish(ResourcesListChanged, "")
	}
}

// FileURI returns the file:// URI of an absolute path, as plugins/files
// names its resources.
func FileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
