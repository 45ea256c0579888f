package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/google/go-cmp/cmp"
)

func TestGoodPlugin(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "good", Config{})

	if got, want := p.Name(), "good"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	sum := sha256.Sum256(fixture(t, "good"))
	if got, want := p.Digest(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest() = %s, want %s", got, want)
	}
	m := p.Manifest()
	if diff := cmp.Diff([]string{"good"}, m.Schemes); diff != "" {
		t.Errorf("schemes (-want +got):\n%s", diff)
	}
	if len(m.Resources) != 1 || m.Resources[0].URI != "good://hello" || len(m.Tools) != 1 {
		t.Errorf("manifest = %+v", m)
	}
	readGood(t, p)

	req := `{"name":"echo","arguments":{"x":1},"principal":{"id":"a"}}`
	out, err := invoke(p, context.Background(), abi.OpCallTool, []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"content":[],"structuredContent":`+req+`}`; got != want {
		t.Errorf("echo = %s, want %s", got, want)
	}

	_, err = invoke(p, context.Background(), abi.OpGetPrompt, []byte(`{"name":"x"}`))
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code != abi.CodeNotFound {
		t.Errorf("get_prompt error = %v, want *abi.Error not_found", err)
	}
	// A guest-declared error keeps the instance.
	if n := e.rec.discards(string(ClassGuestError)); n != 0 {
		t.Errorf("guest error discarded %d instances", n)
	}
}

func TestRequestTooLarge(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "good", Config{Limits: Limits{MaxRequestBytes: 100}})
	_, err := invoke(p, context.Background(), abi.OpCallTool, make([]byte, 101))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassRequest || pe.Plugin != "good" {
		t.Fatalf("err = %v, want request class naming good", err)
	}
	// Not a plugin failure: no quarantine, instance kept.
	readGood(t, p)
}

func TestLoadErrors(t *testing.T) {
	// The ABI's shape is checked by Compile, before compiling; the rest
	// by Load, which names the file.
	tests := []struct {
		fixture string
		want    []string
	}{
		{"noexport", []string{"missing export corral_call (i32, i32) -> (i32)"}},
		{"badsig", []string{"export corral_buffer has signature (i64) -> (i32), want (i32) -> (i32)",
			"export corral_call has signature (i32, i32) -> (i64)"}},
		{"wrongabi", []string{"ABI major 2", "this host speaks major 1"}},
		{"starttrap", []string{"starttrap.wasm", "instantiate", "unreachable"}},
		{"badmanifest", []string{"badmanifest.wasm", `name "Bad Name!"`, "abi is 7", `scheme "no scheme"`}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p, err := e.tryLoad(t, tt.fixture, Config{})
			if err == nil {
				p.Close(context.Background())
				t.Fatal("loaded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			// The runtime still serves other plugins.
			readGood(t, e.load(t, "good", Config{}))
		})
	}
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	m, err := Inspect(ctx, fixture(t, "caps"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"log", "notify", "kv", "files", "http", "config"}
	if diff := cmp.Diff(want, m.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if _, err := Inspect(ctx, fixture(t, "noexport")); err == nil || !strings.Contains(err.Error(), "corral_call") {
		t.Errorf("Inspect(noexport) = %v, want missing corral_call", err)
	}
	if _, err := Inspect(ctx, []byte("not wasm")); err == nil {
		t.Error("Inspect(garbage) succeeded")
	}
}

// TestContained runs every misbehaving fixture next to good.wasm: each
// failure is classified, names the plugin, is observed, discards the
// instance, and leaves the runtime and the other plugin serving.
func TestContained(t *testing.T) {
	tests := []struct {
		fixture string
		op      abi.Op
		req     string
		limits  Limits
		class   ErrorClass
		msg     string // in the error
		log     string // in the logs
	}{
		{fixture: "loop", op: abi.OpReadResource, limits: Limits{Timeout: 50 * time.Millisecond}, class: ClassTimeout},
		// A stack overflow takes ~4s under -race; a generous deadline
		// keeps it a trap (not a timeout) on a loaded machine.
		{fixture: "recurse", op: abi.OpReadResource, limits: Limits{Timeout: time.Minute}, class: ClassTrap, msg: "stack overflow"},
		{fixture: "grow", op: abi.OpReadResource, limits: Limits{MemoryPages: 16}, class: ClassTrap, msg: "unreachable",
			log: "fatal error: out of memory"},
		{fixture: "bigout", op: abi.OpReadResource, class: ClassOversize, msg: "response of 9437184 bytes is over the limit of 8388608"},
		{fixture: "oob", op: abi.OpReadResource, class: ClassTrap, msg: "set_result: range [0xfffffff0, +64) is outside memory"},
		{fixture: "oob", op: abi.OpCallTool, class: ClassTrap, msg: "outside memory"},
		{fixture: "oob", op: abi.OpComplete, class: ClassTrap, msg: "called twice"},
		{fixture: "badjson", op: abi.OpCallTool, class: ClassBadOutput, msg: "not a well-formed error"},
		// Objects two JSON readers read apart (strict reader): refused.
		{fixture: "smuggle", op: abi.OpCallTool, class: ClassBadOutput, msg: `member "Message" differs from "message" only in case`},
		{fixture: "smuggle", op: abi.OpGetPrompt, class: ClassBadOutput, msg: `member "requestState" is repeated`},
		{fixture: "caps", op: abi.OpCallTool, req: "X", class: ClassTrap, msg: "file_read: range [0xffff0000, +16)"},
		{fixture: "caps", op: abi.OpCallTool, req: "T", class: ClassTrap, msg: "take: range"},
		{fixture: "flaky", op: abi.OpComplete, class: ClassTrap, msg: "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture+"/"+tt.op.String()+tt.req, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			good := e.load(t, "good", Config{})
			bad := e.load(t, tt.fixture, Config{PoolSize: 1, Limits: tt.limits})
			req := tt.req
			if req == "" {
				req = `{"uri":"x://y","principal":{"id":"t"}}`
			}
			for i := range 2 { // the replacement instance fails the same way
				_, err := invoke(bad, context.Background(), tt.op, []byte(req))
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("call %d: err = %v, want *Error", i, err)
				}
				if pe.Plugin != bad.Name() || pe.Class != tt.class || pe.Op != tt.op {
					t.Errorf("call %d: error = {%s %s %s}, want {%s %s %s}", i, pe.Plugin, pe.Op, pe.Class, bad.Name(), tt.op, tt.class)
				}
				if !strings.Contains(err.Error(), "plugin "+bad.Name()) || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("call %d: error %q lacks the plugin name or %q", i, err, tt.msg)
				}
				readGood(t, good)
			}
			if got := e.rec.classes(bad.Name()); len(got) != 2 || got[0] != tt.class {
				t.Errorf("observed classes %v, want 2 × %s", got, tt.class)
			}
			if n := e.rec.discards(string(tt.class)); n != 2 {
				t.Errorf("discarded %d instances for %s, want 2", n, tt.class)
			}
			if tt.log != "" && !strings.Contains(e.logs.String(), tt.log) {
				t.Errorf("logs lack %q:\n%s", tt.log, e.logs.String())
			}
		})
	}
}

// TestShapeNotCheckedHere: output-shape validation (UTF-8, base64, claimed
// URIs) belongs to host/catalog; the plugin hands the bytes through.
func TestShapeNotCheckedHere(t *testing.T) {
	tests := []struct{ fixture, want string }{
		{"badutf8", "bad \xff\xfe\xc0\xaf bytes"},
		{"badb64", `"blob":"!!not*base64??"`},
		{"outside", `"uri":"good://hello"`},
		// Nor the syntax: the catalog's one pass reads it (output_test.go).
		{"badjson", `{"contents":[{"uri":"badjson://x","text":`},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, tt.fixture, Config{})
			out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{"uri":"x://y"}`))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("out = %q, want it to contain %q", out, tt.want)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, pages := range []uint32{16, 40} {
		t.Run(fmt.Sprint(pages), func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "grow", Config{PoolSize: 1, Limits: Limits{MemoryPages: pages}})
			out, err := invoke(p, context.Background(), abi.OpCallTool, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(out), fmt.Sprintf(`{"pages":%d}`, pages); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestResponseLimitRaised(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "bigout", Config{PoolSize: 1, Limits: Limits{MaxResponseBytes: 10 << 20}})
	out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 9437184 {
		t.Errorf("len = %d", len(out))
	}
}

func TestQuarantine(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "flaky", Config{PoolSize: 1, Limits: Limits{FailureThreshold: 3, Quarantine: time.Minute}})
	now := time.Unix(1_000_000, 0)
	p.now = func() time.Time { return now }
	ctx := context.Background()
	echo := []byte(`{"name":"echo"}`)

	// Guest-declared errors are not failures.
	for range 5 {
		if _, err := invoke(p, ctx, abi.OpGetPrompt, nil); !errors.As(err, new(*abi.Error)) {
			t.Fatalf("get_prompt: %v", err)
		}
	}
	// A success resets the count.
	for range 2 {
		invoke(p, ctx, abi.OpComplete, nil)
	}
	if _, err := invoke(p, ctx, abi.OpCallTool, echo); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		invoke(p, ctx, abi.OpComplete, nil)
	}
	_, err := invoke(p, ctx, abi.OpCallTool, echo)
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassQuarantined || !errors.Is(err, ErrQuarantined) {
		t.Fatalf("after 3 failures: %v, want quarantined", err)
	}
	if q, until := p.Quarantined(); !q || !until.Equal(now.Add(time.Minute)) {
		t.Errorf("Quarantined() = %v, %v", q, until)
	}

	// After the back-off one failure quarantines again, for twice as long.
	now = now.Add(time.Minute + time.Second)
	invoke(p, ctx, abi.OpComplete, nil)
	if q, until := p.Quarantined(); !q || !until.Equal(now.Add(2*time.Minute)) {
		t.Errorf("second quarantine = %v, %v, want until +2m", q, until)
	}
	now = now.Add(2*time.Minute + time.Second)
	if _, err := invoke(p, ctx, abi.OpCallTool, echo); err != nil {
		t.Fatalf("after back-off: %v", err)
	}
	if q, _ := p.Quarantined(); q {
		t.Error("still quarantined after a success")
	}
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	if diff := cmp.Diff([]bool{true, false}, e.rec.quarantine); diff != "" {
		t.Errorf("observed quarantine (-want +got):\n%s", diff)
	}
}

// TestHammer drives one pool from many goroutines with traps and guest
// errors mixed in: no response is lost or crossed.
func TestHammer(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "flaky", Config{PoolSize: 3, Limits: Limits{FailureThreshold: 1 << 30}})
	const workers, calls = 12, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				ctx := context.Background()
				switch {
				case (w+i)%7 == 0:
					_, err := invoke(p, ctx, abi.OpComplete, []byte(`{}`))
					var pe *Error
					if !errors.As(err, &pe) || pe.Class != ClassTrap {
						errs <- fmt.Errorf("trap call: %v", err)
					}
				case (w+i)%5 == 0:
					_, err := invoke(p, ctx, abi.OpGetPrompt, []byte(`{}`))
					if !errors.As(err, new(*abi.Error)) {
						errs <- fmt.Errorf("guest error call: %v", err)
					}
				default:
					req := fmt.Sprintf(`{"name":"echo","arguments":{"w":%d,"i":%d,"pad":"%s"}}`, w, i, strings.Repeat("x", (w*31+i*17)%900))
					out, err := invoke(p, ctx, abi.OpCallTool, []byte(req))
					if err != nil {
						errs <- fmt.Errorf("echo %d/%d: %v", w, i, err)
						continue
					}
					if want := `{"content":[],"structuredContent":` + req + `}`; string(out) != want {
						errs <- fmt.Errorf("echo %d/%d crossed: got %.80s", w, i, out)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(e.rec.classes("flaky")); got != workers*calls {
		t.Errorf("observed %d calls, want %d", got, workers*calls)
	}
}

func TestCloseWaitsAndRefuses(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p, err := e.tryLoad(t, "good", Config{PoolSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	readGood(t, p)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = invoke(p, context.Background(), abi.OpReadResource, []byte(`{}`))
	if !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

func TestCallerCancelIsNotAFailure(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "loop", Config{PoolSize: 1, Limits: Limits{FailureThreshold: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := invoke(p, ctx, abi.OpReadResource, []byte(`{}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
	if q, _ := p.Quarantined(); q {
		t.Error("quarantined after the caller gave up")
	}
}

func TestCompilationCacheDir(t *testing.T) {
	dir := t.TempDir() + "/cache"
	ctx := context.Background()
	for i := range 2 {
		e := newEnv(t, RuntimeConfig{CacheDir: dir})
		m, err := e.rt.Compile(ctx, fixture(t, "good"))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		p, err := e.rt.Load(ctx, m, Config{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		readGood(t, p)
		p.Close(ctx)
		e.rt.Close(ctx)
	}
	info, err := osStat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("cache dir mode %v, want 0700", perm)
	}
	if n := countFiles(t, dir); n == 0 {
		t.Error("cache dir is empty")
	}
}

// TestCorruptCompilationCache: a truncated cache entry (disk corruption,
// a bad copy) is detected, discarded and recompiled; the entry is whole
// again for the next start. wazero has no per-entry delete, so corral
// replaces the entry itself; wasmtime's engine removes what fails to
// deserialize.
func TestCorruptCompilationCache(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	run := func(what string) {
		t.Helper()
		e := newEnv(t, RuntimeConfig{CacheDir: dir})
		defer e.rt.Close(ctx)
		m, err := e.rt.Compile(ctx, fixture(t, "good"))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		p, err := e.rt.Load(ctx, m, Config{PoolSize: 1})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		readGood(t, p)
		p.Close(ctx)
	}
	run("cold")
	sizes := cacheFiles(t, dir)
	if len(sizes) == 0 {
		t.Fatal("nothing cached")
	}
	for path, size := range sizes {
		if err := os.Truncate(path, size/2); err != nil {
			t.Fatal(err)
		}
	}
	run("after truncating every entry")
	for path, size := range cacheFiles(t, dir) {
		if was, ok := sizes[path]; ok && size <= was/2 {
			t.Errorf("%s is still truncated (%d bytes, was %d)", path, size, was)
		}
	}
	run("after the repair")
}

// TestEngineRefusalIsTheModules: with a cache directory, a module the
// engine refuses (bigmem starts above the default memory limit) fails as
// the module's fault, not the host's, and leaves no cache entry.
func TestEngineRefusalIsTheModules(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, RuntimeConfig{CacheDir: dir})
	m, err := e.rt.Compile(context.Background(), fixture(t, "bigmem"))
	if err == nil {
		m.Close(context.Background())
		t.Fatal("bigmem compiled under the default memory limit")
	}
	if errors.Is(err, ErrHost) {
		t.Errorf("%v: a host failure, want the module's", err)
	}
	if n := len(cacheFiles(t, dir)); n != 0 {
		t.Errorf("%d cache entries", n)
	}
}

// cacheFiles returns the size of every regular file under dir.
func cacheFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestManifestValidation(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ok", `{"name":"a-b_1","abi":1,"schemes":["x+y.z"],"resources":[{"uri":"x+y.z://a","name":"a"}]}`, ""},
		{"trailing", `{"name":"a","abi":1} {}`, "data after the JSON value"},
		{"repeated name", `{"name":"a","abi":1,"name":"b"}`, `member "name" is repeated`},
		{"case-variant name", `{"name":"a","abi":1,"Name":"b"}`, `member "Name" differs from "name" only in case`},
		{"repeated tool member", `{"name":"a","abi":1,"tools":[{"name":"t","inputSchema":{},"name":"u"}]}`, `member "name" in tools is repeated`},
		{"case-variant scheme list", `{"name":"a","abi":1,"schemes":["x"],"Schemes":["y"]}`, `differs from "schemes" only in case`},
		{"opaque schema repeats", `{"name":"a","abi":1,"tools":[{"name":"t","inputSchema":{"type":"object","type":"string"}}]}`, ""},
		{"upper scheme", `{"name":"a","abi":1,"schemes":["X"]}`, "not a lowercase RFC 3986 scheme"},
		{"dup scheme", `{"name":"a","abi":1,"schemes":["x","x"]}`, "listed twice"},
		{"long scheme", `{"name":"a","abi":1,"schemes":["` + strings.Repeat("s", 65) + `"]}`, "not a lowercase RFC 3986 scheme"},
		{"longest scheme", `{"name":"a","abi":1,"schemes":["` + strings.Repeat("s", 64) + `"]}`, ""},
		{"resource outside", `{"name":"a","abi":1,"schemes":["x"],"resources":[{"uri":"y://a","name":"a"}]}`, "outside the plugin's schemes"},
		{"template outside", `{"name":"a","abi":1,"schemes":["x"],"templates":[{"uriTemplate":"{+u}","name":"a"}]}`, "outside the plugin's schemes"},
		{"template scheme an expression", `{"name":"a","abi":1,"schemes":["x"],"templates":[{"uriTemplate":"{s}://a","name":"a"}]}`, "outside the plugin's schemes"},
		{"dup tool", `{"name":"a","abi":1,"tools":[{"name":"t","inputSchema":{}},{"name":"t","inputSchema":{}}]}`, "listed twice"},
		{"tool schema", `{"name":"a","abi":1,"tools":[{"name":"t"}]}`, "no inputSchema"},
		{"long name", `{"name":"` + strings.Repeat("a", 65) + `","abi":1}`, "does not match"},
		{"not json", `nope`, "manifest"},
		{"required not requested", `{"name":"a","abi":1,"capabilities":["log"],"requiredCapabilities":["files"]}`, `required capability "files" is not in capabilities`},
		{"bad UTF-8 in a raw member", "{\"name\":\"a\",\"abi\":1,\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"description\":\"\xff\"}}]}", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseManifest([]byte(tt.in))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	m, unknown, err := parseManifest([]byte(`{"name":"a","abi":1,"capabilities":["log","teleport","log","kv"],"requiredCapabilities":["kv","teleport","kv"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"log", "kv"}, m.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kv"}, m.RequiredCapabilities); diff != "" {
		t.Errorf("requiredCapabilities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"teleport"}, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(8)
	for _, s := range []string{"abc", "defgh", "ij", "0123456789"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "23456789" {
		t.Errorf("tail = %q", got)
	}
	b = newTailBuffer(8)
	b.Write([]byte("abcdef"))
	b.Write([]byte("ghij"))
	if got := b.String(); got != "cdefghij" {
		t.Errorf("tail = %q", got)
	}
}

var _ = json.Valid

func TestRecycleAfterMaxCalls(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "good", Config{PoolSize: 1, Limits: Limits{MaxCallsPerInstance: 3}})
	for range 10 {
		readGood(t, p)
	}
	if n := e.rec.discards("recycle"); n != 3 {
		t.Errorf("recycled %d instances, want 3", n)
	}
}

// TestCallBudgetStopsGuest: a Call's Timeout (a list request's per-provider
// budget, catalog.Options.ListBudget) stops a spinning guest long before
// the plugin's own deadline, as a timeout that counts as a failure. The
// plugin's deadline here is an hour: were the budget ignored, the call
// would not return within the test's wait.
func TestCallBudgetStopsGuest(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "loop", Config{PoolSize: 1, Limits: Limits{Timeout: time.Hour}})
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), catalog.Call{Op: abi.OpListResources, Request: []byte(`{}`), Timeout: 50 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		var pe *Error
		if !errors.As(err, &pe) || pe.Class != ClassTimeout {
			t.Fatalf("err = %v, want a timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call ran past its budget (50ms) for a minute")
	}
}
