package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testMinisignKey is the repository's public test key (testdata/keys), by
// which `make plugins` signs the bundled plugins.
const testMinisignKey = "RWTjrqwaaoxTnYGAAlgbwsFqkZ4nulEjFqb+CRMo8mrNVamAsCvawQ57"

// TestSupplyChainLock is the distribution path end to end, with the real
// binaries: `corral plugin push` of the bundled issues plugin (signed by
// make plugins) to a registry, `corral plugin lock`, `corral serve` with
// the lock and a trust policy, read by the Go SDK client. Then the tag is
// moved to other signed bytes (the files plugin): the server, a replica
// started afterwards and one started with the registry down all serve the
// locked bytes, with the same set generation, and the directory's drop is
// never consulted.
func TestSupplyChainLock(t *testing.T) {
	plugins := filepath.Join(repoRoot, "build", "plugins")
	issues, files := filepath.Join(plugins, "issues.wasm"), filepath.Join(plugins, "files.wasm")
	if why := missingBuild(corralBin, issues, issues+".minisig", files, files+".minisig"); why != "" {
		t.Skip(why)
	}
	reg := startRegistry(t)
	dir := t.TempDir()
	tag := "oci://" + reg.host + "/corral/issues:v1"
	out := runCorral(t, "plugin", "push", issues, tag)
	if !strings.Contains(out, "minisign signature attached as a referrer") {
		t.Fatalf("push: %s", out)
	}

	// A signed drop in the directory: served without a lock, never with.
	drop := filepath.Join(dir, "drop")
	os.Mkdir(drop, 0o755)
	copyFile(t, files, filepath.Join(drop, "files.wasm"))
	copyFile(t, files+".minisig", filepath.Join(drop, "files.wasm.minisig"))
	base := fmt.Sprintf(`plugins:
  dir: %s
  store: %s
  trust:
    minisign: [%s]
plugin:
  issues:
    source: %s
    grants:
      files: [%s]
      config:
        data: issues.json
`, drop, filepath.Join(dir, "store"), testMinisignKey, tag, filepath.Join(repoRoot, "testdata", "sample", "issues"))
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte(base), 0o644)
	lock := filepath.Join(dir, "corral.lock")
	out = runCorral(t, "plugin", "lock", "--config", cfg, "--out", lock)
	if !strings.Contains(out, "signer minisign:"+testMinisignKey) {
		t.Fatalf("lock: %s", out)
	}
	locked := filepath.Join(dir, "locked.yaml")
	os.WriteFile(locked, []byte(strings.Replace(base, "plugins:\n", "plugins:\n  lock: "+lock+"\n", 1)), 0o644)

	first := serveLocked(t, locked)
	want := readIssue(t, first)
	gen := first.generation(t)

	// The tag now names other signed bytes.
	runCorral(t, "plugin", "push", files, tag)
	for name, srv := range map[string]*lockedServer{"running": first, "restarted": serveLocked(t, locked)} {
		if got := readIssue(t, srv); got != want {
			t.Errorf("%s server after the tag moved: %q, want the locked bytes' %q", name, got, want)
		}
		if g := srv.generation(t); g != gen {
			t.Errorf("%s server: generation %s, want %s (same lock, same set)", name, g, gen)
		}
	}
	// The registry down: a restart serves from the store.
	reg.stop()
	if got := readIssue(t, serveLocked(t, locked)); got != want {
		t.Errorf("restart with the registry down: %q, want %q", got, want)
	}
}

type registryProc struct {
	host string
	cmd  *exec.Cmd
}

func (r *registryProc) stop() {
	if r.cmd.Process != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

// startRegistry builds and runs cmd/corral-registry (an in-memory OCI
// registry with the referrers API) on a loopback port.
func startRegistry(t *testing.T) *registryProc {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "corral-registry")
	build := exec.Command("go", "build", "-o", bin, "./cmd/corral-registry")
	build.Dir = repoRoot
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build corral-registry: %v\n%s", err, b)
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &registryProc{cmd: cmd}
	t.Cleanup(r.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("corral-registry: %v", err)
	}
	r.host = strings.TrimSpace(line)
	return r
}

// runCorral runs bin/corral with args and returns its stdout, failing the
// test on a non-zero exit.
func runCorral(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(corralBin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("corral %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

type lockedServer struct {
	*serverProc
	admin string
}

// serveLocked starts `corral serve` with the configuration, an admin
// listener for /status, until the test ends.
func serveLocked(t *testing.T, cfg string) *lockedServer {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	admin := fmt.Sprintf("127.0.0.1:%d", port)
	return &lockedServer{serverProc: startedHTTPServer(t, "--config", cfg, "--admin", admin), admin: admin}
}

// generation is the served set's generation from /status, after checking
// that the lock's issues plugin is the only one serving.
func (s *lockedServer) generation(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + s.admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Generation string `json:"generation"`
		Files      []struct {
			Plugin, State, Signer string
		} `json:"files"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	fs := st.Files
	if len(fs) != 1 || fs[0].Plugin != "issues" || fs[0].State != "serving" || fs[0].Signer != "minisign:"+testMinisignKey {
		t.Errorf("/status files: %+v, want only the locked issues plugin, serving, signed by the test key", fs)
	}
	return st.Generation
}

// readIssue lists resources with the Go SDK client, checks that no file://
// resource is served (the directory is not consulted under a lock) and
// returns the text of the first issues:// resource.
func readIssue(t *testing.T, srv *lockedServer) string {
	t.Helper()
	ctx := testContext(t)
	s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", MaxRetries: -1}, eras[0])
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		uris, _, err := collect(ctx, s.ResourcesPage)
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		for _, u := range uris {
			if strings.HasPrefix(u, "file://") {
				t.Fatalf("%s served under a lock: the directory was consulted", u)
			}
		}
		for _, u := range uris {
			if strings.HasPrefix(u, "issues://") {
				cs, err := s.Read(ctx, u)
				if err != nil || len(cs) == 0 {
					t.Fatalf("read %s: %v", u, err)
				}
				return cs[0].Text
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no issues:// resource among %q", uris)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
