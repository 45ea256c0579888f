package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncLog is a JSON log a test reads while the registry writes it.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }

// records returns the log lines with message msg.
func (l *syncLog) records(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(l.b.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestProgressLogged: a load of three files logs that it compiles three,
// each file as it is done (n of 3), and, while one compile hangs, that
// compile by name as the slowest, without a Progress callback and with no
// terminal in sight.
func TestProgressLogged(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, spec{Name: "a", Scheme: "a", Text: "1"}, spec{Name: "b", Scheme: "b", Text: "2"},
		spec{Name: "slow", Scheme: "slow", Text: "3"})
	l := newSlowLoader(t)
	logs := &syncLog{}
	r, err := New(Options{Dir: dir, Loader: l, Debounce: 10 * time.Millisecond, ProgressEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	loaded := make(chan error, 1)
	go func() { loaded <- r.Load(context.Background(), time.Minute) }()
	<-l.started
	deadline := time.Now().Add(10 * time.Second)
	for len(logs.records("still compiling plugins")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no 'still compiling plugins' line within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	slow := logs.records("still compiling plugins")[0]
	if slow["slowest"] != "slow.wasm" || slow["of"] != float64(3) || slow["compiling"] != float64(1) {
		t.Errorf("still compiling: %v; want slowest slow.wasm, of 3, 1 compiling", slow)
	}
	l.open()
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if got := logs.records("compiling plugins"); len(got) != 1 || got[0]["files"] != float64(3) {
		t.Errorf("compiling plugins lines %v, want one with files 3", got)
	}
	done := logs.records("plugin file done")
	if len(done) != 3 {
		t.Fatalf("plugin file done lines %v, want 3", done)
	}
	for i, d := range done {
		if d["n"] != float64(i+1) || d["of"] != float64(3) || d["compile"] == nil {
			t.Errorf("line %d: %v; want n %d of 3 with its compile time", i, d, i+1)
		}
	}
	if last := done[2]; last["file"] != "slow.wasm" {
		t.Errorf("last file done %v, want slow.wasm", last["file"])
	}
}
