package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// fixture returns the bytes of testdata/wat/<name>.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wat", name+".wasm"))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// recorder is an Observer and a Notifier that remembers everything.
type recorder struct {
	mu         sync.Mutex
	calls      []recCall
	created    int
	discarded  map[string]int
	quarantine []bool
	denied     []string // "plugin/capability/reason"
	notes      []string // "plugin kind uri"
}

type recCall struct {
	plugin, op string
	class      ErrorClass
}

func (r *recorder) Call(plugin, op string, _ time.Duration, class ErrorClass) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recCall{plugin, op, class})
}

func (r *recorder) Instance(plugin string, created bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if created {
		r.created++
		return
	}
	if r.discarded == nil {
		r.discarded = map[string]int{}
	}
	r.discarded[reason]++
}

func (r *recorder) Quarantine(plugin string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quarantine = append(r.quarantine, on)
}

func (r *recorder) Denied(plugin, capability, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.denied = append(r.denied, plugin+"/"+capability+"/"+reason)
}

func (r *recorder) Rejected(plugin, op string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recCall{plugin, op, ClassBadOutput})
}

func (r *recorder) Notify(plugin string, kind int32, uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, plugin+" "+string(rune('0'+kind))+" "+uri)
}

func (r *recorder) classes(plugin string) []ErrorClass {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ErrorClass
	for _, c := range r.calls {
		if c.plugin == plugin {
			out = append(out, c.class)
		}
	}
	return out
}

func (r *recorder) discards(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.discarded[reason]
}

func (r *recorder) deniedFor(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, d := range r.denied {
		if strings.HasPrefix(d, prefix) {
			n++
		}
	}
	return n
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type env struct {
	rt   *Runtime
	rec  *recorder
	logs *syncBuffer
}

func newEnv(t testing.TB, cfg RuntimeConfig) *env {
	t.Helper()
	e := &env{rec: &recorder{}, logs: &syncBuffer{}}
	if cfg.Engine == "" {
		cfg.Engine = kitEngine
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Observer = e.rec
	cfg.Notifier = e.rec
	rt, err := NewRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	t.Cleanup(func() { rt.Close(context.Background()) })
	return e
}

// load compiles and loads a fixture; Source defaults to its file name.
func (e *env) load(t testing.TB, name string, cfg Config) *Plugin {
	t.Helper()
	p, err := e.tryLoad(t, name, cfg)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func (e *env) tryLoad(t testing.TB, name string, cfg Config) (*Plugin, error) {
	t.Helper()
	ctx := context.Background()
	m, err := e.rt.Compile(ctx, fixture(t, name))
	if err != nil {
		return nil, err
	}
	if cfg.Source == "" {
		cfg.Source = name + ".wasm"
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 2
	}
	return e.rt.Load(ctx, m, cfg)
}

// readGood checks that good.wasm answers its canned resource.
func readGood(t testing.TB, p *Plugin) {
	t.Helper()
	out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"good://hello","principal":{"id":"t"}}`))
	if err != nil {
		t.Fatalf("good read: %v", err)
	}
	var res abi.ReadResourceResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Contents) != 1 || !bytes.Contains(res.Contents[0], []byte("hello from wat")) {
		t.Fatalf("good read = %s (%v)", out, err)
	}
}

// capsResult is the response of caps.wasm.
type capsResult struct {
	N   int32           `json:"n"`
	Out json.RawMessage `json:"out"`
}

func callCaps(t testing.TB, p *Plugin, req string) capsResult {
	t.Helper()
	out, err := invoke(p, context.Background(), abi.OpCallTool, []byte(req))
	if err != nil {
		t.Fatalf("caps %q: %v", req, err)
	}
	var r capsResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("caps %q: %s: %v", req, out, err)
	}
	return r
}

func osStat(p string) (os.FileInfo, error) { return os.Stat(p) }

func countFiles(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// invoke calls p the way the catalog does and returns the payload, with a
// declared failure as its *abi.Error and a request for input as its
// *abi.InputRequired.
func invoke(p *Plugin, ctx context.Context, op abi.Op, req []byte) ([]byte, error) {
	res, err := p.Call(ctx, catalog.Call{Op: op, Request: req})
	if err != nil {
		return nil, err
	}
	switch res.Status {
	case abi.StatusError:
		var e abi.Error
		if err := json.Unmarshal(res.Body, &e); err != nil {
			return nil, err
		}
		return nil, &e
	case abi.StatusInputRequired:
		var ir abi.InputRequired
		if err := json.Unmarshal(res.Body, &ir); err != nil {
			return nil, err
		}
		return nil, &ir
	}
	return res.Body, nil
}
