package config

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher reloads a configuration file when it changes. Use NewWatcher.
type Watcher struct {
	src      Source
	cur      atomic.Pointer[Config]
	log      *slog.Logger
	debounce time.Duration
	onReload func(old, new *Config)
	reload   sync.Mutex // one Reload at a time (file events and SIGHUP)
}

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Logger receives reload outcomes; nil discards them.
	Logger *slog.Logger
	// Debounce is how long the file must be quiet before it is reloaded
	// (default 200ms).
	Debounce time.Duration
	// OnReload is called, from the watcher's goroutine, after a successful
	// reload that changed a reloadable key, with the configuration in force
	// before and after. Restart-only keys keep their old values in new.
	OnReload func(old, new *Config)
}

// NewWatcher returns a Watcher of src.File that starts from cur (the
// configuration loaded from src).
func NewWatcher(src Source, cur *Config, opts WatchOptions) *Watcher {
	w := &Watcher{src: src, log: opts.Logger, debounce: opts.Debounce, onReload: opts.OnReload}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.debounce <= 0 {
		w.debounce = 200 * time.Millisecond
	}
	w.cur.Store(cur)
	return w
}

// Current returns the configuration in force.
func (w *Watcher) Current() *Config { return w.cur.Load() }

// Run watches the file until ctx is done. It watches the file's directory,
// so editors that replace the file by renaming are seen too.
func (w *Watcher) Run(ctx context.Context) error {
	if w.src.File == "" {
		<-ctx.Done()
		return nil
	}
	abs, err := filepath.Abs(w.src.File)
	if err != nil {
		return fmt.Errorf("config watch: %w", err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config watch: %w", err)
	}
	defer fw.Close()
	if err := fw.Add(filepath.Dir(abs)); err != nil {
		return fmt.Errorf("config watch: %w", err)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == abs {
				timer.Reset(w.debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.log.Warn("config watch error", "err", err)
		case <-timer.C:
			w.Reload()
		}
	}
}

// Reload loads the file again now; the server calls it on SIGHUP. A
// configuration that fails to load or validate is logged and the running
// one stays in force; the returned error says why. It is safe to call
// while Run runs: reloads happen one at a time.
func (w *Watcher) Reload() error {
	w.reload.Lock()
	defer w.reload.Unlock()
	next, err := Load(w.src)
	if err != nil {
		w.log.Error("config reload failed; keeping the running configuration", "file", w.src.File, "err", err)
		return err
	}
	for _, d := range next.Deprecations() {
		w.log.Warn(d)
	}
	old := w.cur.Load()
	if keys := RestartKeys(old, next); len(keys) > 0 {
		w.log.Warn("config changed keys that need a restart; they keep their running values", "keys", keys)
	}
	keys := ReloadKeys(old, next)
	if len(keys) == 0 {
		w.log.Debug("config reloaded; nothing to apply")
		return nil
	}
	applied := applyReloadable(old, next)
	w.cur.Store(applied)
	w.log.Info("config reloaded", "applied", keys)
	if w.onReload != nil {
		w.onReload(old, applied)
	}
	return nil
}
