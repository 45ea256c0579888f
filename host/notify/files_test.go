package notify

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// waitFor reads s until an update of uri arrives, or fails after 1s (the
// acceptance bound for file edits).
func waitFor(t *testing.T, s *Subscription, uri string) {
	t.Helper()
	deadline := time.After(time.Second)
	for {
		select {
		case <-s.Ready():
			for _, ev := range s.Take() {
				if ev.Kind == ResourceUpdated && ev.URI == uri {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no update for %s within 1s", uri)
		}
	}
}

func TestFileWatcher(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "sub", "a.txt")
	if err := os.WriteFile(file, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()

	hub := New(Options{})
	fw, err := NewFileWatcher(hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	fw.SetRoots([]string{root, "relative/ignored"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go fw.Run(ctx)

	s := hub.Subscribe(abi.Principal{}, Filter{ResourcesListChanged: true,
		Resources: []string{FileURI(file), FileURI(root), FileURI(outside)}})

	// An edit.
	if err := os.WriteFile(file, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, FileURI(file))

	// A new directory is watched as it appears; a file in it is a
	// sub-resource of the root subscription.
	nested := filepath.Join(root, "new", "b.txt")
	if err := os.MkdirAll(filepath.Dir(nested), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the watcher add the new directory
	if err := os.WriteFile(nested, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, FileURI(nested))

	// Outside every root: nothing.
	if err := os.WriteFile(filepath.Join(outside, "c.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, ev := range s.Take() {
		if ev.URI == FileURI(filepath.Join(outside, "c.txt")) {
			t.Errorf("update outside the roots: %v", ev)
		}
	}
	if got := fw.Roots(); len(got) != 1 || got[0] != root {
		t.Errorf("Roots = %v", got)
	}
	fw.SetRoots(nil)
	fw.mu.Lock()
	n := len(fw.watched)
	fw.mu.Unlock()
	if n != 0 {
		t.Errorf("%d directories still watched after dropping the roots", n)
	}
}

func TestFileURI(t *testing.T) {
	for in, want := range map[string]string{
		"/srv/a b.txt": "file:///srv/a%20b.txt",
		"/":            "file:///",
		"/x/%.md":      "file:///x/%25.md",
	} {
		if got := FileURI(in); got != want {
			t.Errorf("FileURI(%q) = %q, want %q", in, got, want)
		}
	}
}
