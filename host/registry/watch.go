package registry

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/corral-mcp/corral/host/trust"
)

// watcher turns fsnotify events about *.wasm files in one directory into
// wake-ups; the registry rescans the directory rather than trusting the
// events' details.
//
// It also watches the directory's parent for the directory itself, so
// that a directory removed and created again (or one that did not exist
// yet, or another moved into its place) is watched again at once: a
// watch on a directory ends with the directory.
type watcher struct {
	fw      *fsnotify.Watcher
	dir     string
	changes chan struct{}
	done    chan struct{}
}

func newWatcher(dir string) (*watcher, error) {
	dir = filepath.Clean(dir)
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	// Without the parent's watch (no permission, say), the directory's own
	// watch still serves until the directory goes.
	perr := fw.Add(filepath.Dir(dir))
	if err := fw.Add(dir); err != nil && (perr != nil || !errors.Is(err, fs.ErrNotExist)) {
		fw.Close()
		return nil, err
	}
	w := &watcher{fw: fw, dir: dir, changes: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			name := filepath.Clean(ev.Name)
			switch {
			case name == w.dir:
				// The directory itself came, went or moved. When it
				// came, watch it again; the scan the wake-up causes
				// finds any file already in it.
				if ev.Has(fsnotify.Create) {
					_ = w.fw.Add(w.dir)
				}
			case filepath.Dir(name) != w.dir || !pluginOrSignature(filepath.Base(name)):
				continue // a neighbour of the directory, or not a plugin
			}
			w.wake()
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// An overflow or error: ask for a full rescan.
			w.wake()
		}
	}
}

func (w *watcher) wake() {
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// Close stops watching.
func (w *watcher) Close() error {
	err := w.fw.Close()
	<-w.done
	return err
}

// pluginOrSignature reports whether a file name is a plugin's or that of
// a signature beside one (trust.MinisigSuffix, trust.BundleSuffix).
func pluginOrSignature(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, trust.MinisigSuffix), trust.BundleSuffix)
	return strings.HasSuffix(name, ".wasm")
}
