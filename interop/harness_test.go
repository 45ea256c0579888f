package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The two protocol eras every client is judged in.
const (
	era2026 = "2026-07-28"
	era2025 = "2025-11-25"
)

// eras lists the eras in the order the tests run them.
var eras = []string{era2026, era2025}

// Timeouts. Every wait in this package is bounded so that a hung server
// fails a test instead of hanging the suite.
const (
	readyTimeout = 60 * time.Second // server start until /readyz answers 200 (a cold compile of the Go guests on a busy machine)
	checkTimeout = 30 * time.Second // one client's whole set of checks
	stopTimeout  = 5 * time.Second  // SIGTERM until SIGKILL
)

// repoRoot is the corral repository, the parent of this module.
var repoRoot = func() string {
	dir, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return dir
}()

// Paths to what the Makefile builds before it runs these tests.
var (
	corralBin       = envOr("CORRAL_BIN", filepath.Join(repoRoot, "bin", "corral"))
	conformanceWasm = filepath.Join(repoRoot, "build", "plugins", "conformance.wasm")
	sampleConfig    = filepath.Join(repoRoot, "testdata", "sample", "corral.yaml")
)

// envOr returns the environment variable key, or def when it is unset.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Environment overrides that point the harness at another server.
const (
	envServerCmd = "INTEROP_SERVER_CMD"    // stdio command line, split on spaces
	envHTTPURL   = "INTEROP_HTTP_URL"      // Streamable HTTP endpoint (both eras)
	envHTTPURL25 = "INTEROP_HTTP_URL_2025" // endpoint for the 2025-11-25 era, if different
)

// lockedBuffer is an io.Writer safe for a subprocess's stderr copier and a
// reading test at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns at most the last n bytes of s, for failure messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// missingBuild returns why the tests cannot run corral, or "" when they can.
func missingBuild(files ...string) string {
	var missing []string
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s missing: run `make build plugins` first", strings.Join(missing, " and "))
}

// target says how to reach the server under test: a stdio command to spawn
// per client, and one Streamable HTTP endpoint per era.
type target struct {
	// stdio returns a fresh, unstarted command speaking MCP on stdin/stdout.
	stdio func() *exec.Cmd
	// httpURL maps an era to the endpoint that serves it.
	httpURL map[string]string
	// stderr collects the stdio servers' logs, for failure messages.
	stderr *lockedBuffer
}

// conformanceTarget returns the server under test for the conformance
// fixtures: corral serving a copy of build/plugins/conformance.wasm, or the
// server named by INTEROP_SERVER_CMD / INTEROP_HTTP_URL. It skips the test
// when neither is available.
func conformanceTarget(t *testing.T) *target {
	t.Helper()
	if cmdline := os.Getenv(envServerCmd); cmdline != "" {
		return externalTarget(t, cmdline)
	}
	if why := missingBuild(corralBin, conformanceWasm); why != "" {
		t.Skip(why)
	}
	dir := pluginDir(t)
	tg := &target{stderr: &lockedBuffer{}}
	tg.stdio = func() *exec.Cmd {
		cmd := exec.Command(corralBin, "serve", "--plugins", dir, "--log-level", "debug")
		cmd.Stderr = tg.stderr
		return cmd
	}
	srv := sharedConformanceServer(t)
	url := srv.url + "/mcp"
	tg.httpURL = map[string]string{era2026: url, era2025: url}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stdio server stderr:\n%s", tail(tg.stderr.String(), 4000))
			t.Logf("HTTP server stderr:\n%s", tail(srv.stderr.String(), 4000))
		}
	})
	return tg
}

// externalTarget builds a target from the INTEROP_* environment variables.
func externalTarget(t *testing.T, cmdline string) *target {
	t.Helper()
	args := strings.Fields(cmdline)
	tg := &target{stderr: &lockedBuffer{}, httpURL: map[string]string{}}
	tg.stdio = func() *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = tg.stderr
		return cmd
	}
	if u := os.Getenv(envHTTPURL); u != "" {
		tg.httpURL[era2026] = u
		tg.httpURL[era2025] = u
	}
	if u := os.Getenv(envHTTPURL25); u != "" {
		tg.httpURL[era2025] = u
	}
	return tg
}

// pluginDir makes a temporary plugin folder holding a copy of the
// conformance plugin, so the server's hot reload never watches build/.
func pluginDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, conformanceWasm, filepath.Join(dir, "conformance.wasm"))
	return dir
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	if err := copyFileErr(from, to); err != nil {
		t.Fatal(err)
	}
}

// settledAge backdates copied plugins: corral's registry waits until a
// file has been unchanged for its debounce interval before it loads it, and
// the protocol checks should not depend on that start-up timing
// (TestReadyzMeansLoaded judges it on its own).
const settledAge = time.Minute

func copyFileErr(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("copy plugin: %w", err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		return fmt.Errorf("copy plugin: %w", err)
	}
	old := time.Now().Add(-settledAge)
	if err := os.Chtimes(to, old, old); err != nil {
		return fmt.Errorf("copy plugin: %w", err)
	}
	return nil
}

// serverProc is a running `corral serve --http` subprocess.
type serverProc struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT, no path
	stderr *lockedBuffer
	exited chan struct{}
	err    error // the process's exit status, valid once exited is closed
}

// freePort asks the kernel for an unused loopback port. Another process may
// take it before the server binds it; startHTTPServer retries when that
// happens.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startHTTPServer runs `bin/corral serve <args> --http 127.0.0.1:PORT` on a
// free port and waits until /readyz answers 200 (or, if the server has no
// /readyz, until the port accepts connections and /mcp answers at all).
func startHTTPServer(args ...string) (*serverProc, error) {
	return startHTTPServerEnv(nil, args...)
}

// startHTTPServerEnv is startHTTPServer with env added to the server's
// environment.
func startHTTPServerEnv(env []string, args ...string) (*serverProc, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := startHTTPServerAt(fmt.Sprintf("127.0.0.1:%d", port), env, args...)
		if err != nil {
			lastErr = err
			if p != nil && strings.Contains(p.stderr.String(), "address already in use") {
				continue
			}
			return nil, err
		}
		return p, nil
	}
	return nil, lastErr
}

// startHTTPServerAt runs `bin/corral serve <args> --http addr`, env added
// to its environment, and waits until it is ready. On failure it returns
// the stopped process too, for its log.
func startHTTPServerAt(addr string, env []string, args ...string) (*serverProc, error) {
	p := &serverProc{url: "http://" + addr, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	full := append([]string{"serve"}, args...)
	full = append(full, "--http", addr, "--log-level", "debug")
	p.cmd = exec.Command(corralBin, full...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdin = nil // /dev/null: an HTTP server must not depend on stdin
	// If the test binary dies (a panic, a -timeout), take the server
	// with it instead of leaving it listening.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stdout = p.stderr
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start corral: %w", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitReady(readyTimeout); err != nil {
		p.stop()
		return p, err
	}
	return p, nil
}

// waitReady polls /readyz until it answers 200, the process exits, or the
// timeout passes. A 404 from /readyz falls back to "the port is open".
func (p *serverProc) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("corral exited before it was ready (%v):\n%s", p.err, tail(p.stderr.String(), 4000))
		default:
		}
		resp, err := client.Get(p.url + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				return nil
			case http.StatusNotFound:
				return nil // no /readyz on this build, but the listener is up
			}
			last = fmt.Sprintf("/readyz: %s %s", resp.Status, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("corral not ready after %v (last: %s):\n%s", timeout, last, tail(p.stderr.String(), 4000))
}

// stop sends SIGTERM, then SIGKILL after stopTimeout, and waits for exit.
func (p *serverProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// shared holds the HTTP server the conformance tests share: starting one
// per test would multiply plugin compilation for nothing, since the 2026 wire
// is stateless and the 2025 wire keeps each client in its own session.
var shared struct {
	once    sync.Once
	dir     string
	srv     *serverProc
	cluster *cluster // under make test-cluster; srv is its proxy
	err     error
}

// sharedConformanceServer starts (once) corral over HTTP with the
// conformance plugin, and fails the test if it cannot.
func sharedConformanceServer(t *testing.T) *serverProc {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "corral-interop-plugins-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		if shared.err = copyFileErr(conformanceWasm, filepath.Join(dir, "conformance.wasm")); shared.err != nil {
			return
		}
		if clusterMode {
			// make test-cluster: every HTTP client judges three replicas
			// behind a round-robin proxy instead (cluster_test.go).
			shared.cluster, shared.err = startCluster(dir, "interop", conformanceGrants)
			if shared.err == nil {
				shared.srv = shared.cluster.proxy
			}
			return
		}
		shared.srv, shared.err = startHTTPServer("--plugins", dir)
	})
	if shared.err != nil {
		t.Fatalf("shared HTTP server: %v", shared.err)
	}
	select {
	case <-shared.srv.exited:
		t.Fatalf("shared HTTP server has exited (%v):\n%s", shared.srv.err, tail(shared.srv.stderr.String(), 4000))
	default:
	}
	return shared.srv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		shared.cluster.stop()
	} else if shared.srv != nil {
		shared.srv.stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// startedHTTPServer is startHTTPServer for one test: it stops the server
// when the test ends and prints its log if the test failed.
func startedHTTPServer(t testing.TB, args ...string) *serverProc {
	t.Helper()
	p, err := startHTTPServer(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("server stderr:\n%s", tail(p.stderr.String(), 4000))
		}
	})
	return p
}

// testContext returns a context bounded by checkTimeout and the test's
// own deadline.
func testContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	t.Cleanup(cancel)
	return ctx
}

// errSkipEra tells a check runner that the target does not serve an era
// over a transport (an external target with no URL for it).
var errSkipEra = errors.New("era not served by this target")
