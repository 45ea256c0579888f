package registry

import (
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// watcher turns fsnotify events about *.wasm files in one directory into
// wake-ups; the registry rescans the directory rather than trusting the
// events' details.
type watcher struct {
	fw      *fsnotify.Watcher
	changes chan struct{}
	done    chan struct{}
}

func newWatcher(dir string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, err
	}
	w := &watcher{fw: fw, changes: make(chan struct{}, 1), done: make(chan struct{})}
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
			if !strings.HasSuffix(filepath.Base(ev.Name), ".wasm") {
				continue
			}
			select {
			case w.changes <- struct{}{}:
			default:
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// An overflow or error: ask for a full rescan.
			select {
			case w.changes <- struct{}{}:
			default:
			}
		}
	}
}

// Close stops watching.
func (w *watcher) Close() error {
	err := w.fw.Close()
	<-w.done
	return err
}
