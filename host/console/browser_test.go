//go:build browser

package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// repoRoot is the repository root (two levels up from host/console).
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

// chromium finds Debian's chromium (make browser installs it). Without it
// the test skips, unless CORRAL_BROWSER_REQUIRED says CI installed one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CORRAL_BROWSER_REQUIRED") != "" {
		t.Fatal("chromium not found (make browser installs it)")
	}
	t.Skip("chromium not found; make browser installs it")
	return ""
}

// corral is a running `corral serve` with its admin listener.
type corral struct {
	admin, http string
	pluginDir   string
	logs        *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startCorral builds cmd/corral and serves the conformance and issues
// plugins with the grants the sample configuration gives them, the MCP
// listener and the admin listener on loopback. extra is appended to the
// configuration file.
func startCorral(t *testing.T, extra string) *corral {
	t.Helper()
	for _, n := range []string{"conformance", "issues", "files"} {
		if _, err := os.Stat(filepath.Join(repoRoot, "build", "plugins", n+".wasm")); err != nil {
			t.Skipf("build/plugins/%s.wasm missing (run make plugins)", n)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "corral")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repoRoot, "cmd", "corral")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	for _, n := range []string{"conformance", "issues"} {
		copyFile(t, filepath.Join(repoRoot, "build", "plugins", n+".wasm"), filepath.Join(plugins, n+".wasm"))
	}
	c := &corral{admin: freeAddr(t), http: freeAddr(t), pluginDir: plugins, logs: &lockedBuf{}}
	cfg := fmt.Sprintf(`plugins:
  dir: %s
  cacheDir: %s
  dataDir: %s
  debounce: 50ms
plugin:
  issues:
    grants:
      files: [%s]
      config: {data: issues.json}
      log: true
  conformance:
    grants: {log: true, notify: true}
  files:
    grants:
      files: [%s]
`, plugins, filepath.Join(repoRoot, "build", "cache"), filepath.Join(dir, "data"),
		filepath.Join(repoRoot, "testdata", "sample", "issues"), filepath.Join(repoRoot, "docs")) + extra
	cfgFile := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfgFile, "--http", c.http, "--admin", c.admin)
	cmd.Stdout, cmd.Stderr = c.logs, c.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", c.logs.String())
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		if resp, err := http.Get("http://" + c.admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz not 200 within 90s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	// Write under another name and rename, so the registry never sees a
	// half-written file.
	tmp := to + ".part"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// browser starts headless Chromium with a fresh profile and collects what
// its pages report to the console: console.error and console.warn calls,
// uncaught exceptions, and the browser's own log at warning or error
// (failed loads, CSP violations).
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	exe := chromium(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// Start the browser and its tab, so the console subscription below
	// sees everything the console pages write.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var mu sync.Mutex
	var errs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// shot writes a full-page screenshot to build/console/NAME.png.
func shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, tg) // quality 100 is PNG
		if err != nil {
			return err
		}
		dir := filepath.Join(repoRoot, "build", "console")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// stepTimeout bounds one step of the browser test (a cold compile of a
// plugin added to the directory is the slowest).
const stepTimeout = time.Minute

// get runs one action that returns a value.
func get[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

// TestConsoleInBrowser drives the operator console on the admin listener
// of a real corral in headless Chromium: the overview shows the bundled
// plugins, a plugin's page its capabilities and limits, the browser reads
// a text and an image resource, fills a template with completion as it
// types and runs a prompt, and the overview follows a plugin added to the
// directory, all without an error in the page's console (issue 17, item 5).
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs corral and a browser")
	}
	ctx, errors := browser(t)
	c := startCorral(t, "")
	base := "http://" + c.admin

	run := func(step string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	run("overview",
		chromedp.Navigate(base+"/"), // the admin listener's root leads to the console
		chromedp.WaitVisible(`tr[data-plugin="conformance"]`),
		chromedp.WaitVisible(`tr[data-plugin="issues"]`),
		shot("overview"))
	if n := get(t, ctx, "overview", chromedp.Text(`#plugin-count`)); n != "2" {
		t.Errorf("overview counts %q plugins, want 2", n)
	}

	run("plugin page",
		chromedp.Click(`tr[data-plugin="issues"] a`),
		chromedp.WaitVisible(`#granted`),
		shot("plugin"))
	text := get(t, ctx, "plugin page", chromedp.Text(`main`))
	for _, want := range []string{"Requested", "files: " + filepath.Join(repoRoot, "testdata", "sample", "issues"),
		"config: data (values not shown)", "Quarantine after", "triage_issue", "search_issues"} {
		if !strings.Contains(text, want) {
			t.Errorf("plugin page lacks %q:\n%s", want, text)
		}
	}

	run("read a text resource",
		chromedp.Navigate(base+"/console/resources"),
		chromedp.WaitVisible(`#resources`),
		chromedp.Click(`#resources a[href*="static-text"]`),
		chromedp.WaitVisible(`pre.text`),
		shot("read-text"))
	if text := get(t, ctx, "read a text resource", chromedp.Text(`pre.text`)); text != "This is the content of the static text resource." {
		t.Errorf("text resource shows %q", text)
	}

	run("read an image resource",
		chromedp.Navigate(base+"/console/resources"),
		chromedp.WaitVisible(`#resources`),
		chromedp.Click(`#resources a[href*="login-error.png"]`),
		chromedp.WaitVisible(`img.image`),
		chromedp.WaitVisible(`a.download`),
		shot("read-image"))
	if !get(t, ctx, "decode the image", chromedp.Evaluate[bool](`document.querySelector("img.image").complete && document.querySelector("img.image").naturalWidth > 0`)) {
		t.Error("the image resource is not displayed (not decoded)")
	}

	form := `form[data-template="issues://{number}"]`
	run("fill a template with completion",
		chromedp.Navigate(base+"/console/resources"),
		chromedp.WaitVisible(form),
		chromedp.SendKeys(form+` input[data-arg="number"]`, "1"),
		chromedp.WaitVisible(form+` .suggestions[data-value="1"] button`),
		shot("template-completion"))
	values := get(t, ctx, "completion values", chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+form+` .suggestions button')].map(b => b.textContent)`))
	if len(values) == 0 {
		t.Fatal("no completion values")
	}
	for _, v := range values {
		if !strings.HasPrefix(v, "1") {
			t.Errorf("completion of %q offers %q", "1", v)
		}
	}
	run("read the filled template",
		chromedp.Click(form+` .suggestions button`),
		chromedp.Submit(form+` input[data-arg="number"]`),
		chromedp.WaitVisible(`pre.text`),
		shot("template-read"))
	if uri := get(t, ctx, "filled template", chromedp.Text(`#uri`)); uri != "issues://"+values[0] {
		t.Errorf("the filled template read %q, want issues://%s", uri, values[0])
	}

	prompt := `form[data-prompt="triage_issue"]`
	run("run a prompt",
		chromedp.Navigate(base+"/console/prompts"),
		chromedp.WaitVisible(prompt),
		chromedp.SendKeys(prompt+` input[data-arg="issue_id"]`, values[0]),
		chromedp.Submit(prompt+` input[data-arg="issue_id"]`),
		chromedp.WaitVisible(`#messages li.message`),
		shot("prompt"))
	if text := get(t, ctx, "prompt messages", chromedp.Text(`#messages`)); !strings.Contains(text, "user") || !strings.Contains(text, "Triage issue #"+values[0]) {
		t.Errorf("the prompt's messages: %q", text)
	}

	run("overview before the change", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(`tr[data-plugin="issues"]`))
	copyFile(t, filepath.Join(repoRoot, "build", "plugins", "files.wasm"), filepath.Join(c.pluginDir, "files.wasm"))
	run("the overview follows a plugin added",
		chromedp.WaitVisible(`tr[data-plugin="files"]`),
		shot("overview-updated"))
	if n := get(t, ctx, "count after the change", chromedp.Text(`#plugin-count`)); n != "3" {
		t.Errorf("after adding files.wasm: %q plugins, want 3", n)
	}

	if errs := errors(); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
