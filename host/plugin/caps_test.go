package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

func allGrants(t *testing.T) Grants {
	return Grants{
		Log: true, Notify: true, KV: true,
		Files:     []string{t.TempDir()},
		HTTPHosts: []string{"example.com"},
		Config:    map[string]string{"k": `"v"`},
	}
}

func TestCapabilitiesDeniedUnlessGranted(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{}) // requested, nothing granted
	if got := p.Granted(); len(got) != 0 {
		t.Errorf("Granted() = %v", got)
	}
	for _, req := range []string{"r/etc/passwd", "s/", "l/", "R", `h{"url":"http://example.com"}`, "gk", "kk=v", "dk", "ck", "Lhello", "ncaps://x", "m"} {
		t.Run(req, func(t *testing.T) {
			if r := callCaps(t, p, req); r.N != abi.ErrnoDenied {
				t.Errorf("n = %d, want ErrnoDenied", r.N)
			}
		})
	}
	if n := e.rec.deniedFor("caps/"); n != 12 {
		t.Errorf("observed %d denials, want 12", n)
	}

	// Granted but not requested: still denied.
	e2 := newEnv(t, RuntimeConfig{})
	u := e2.load(t, "ungranted", Config{Grants: allGrants(t)})
	out, err := invoke(u, context.Background(), abi.OpCallTool, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"denied":11}` {
		t.Errorf("ungranted = %s, want all 11 denied", got)
	}
}

func TestGrantedNames(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{Grants: allGrants(t)})
	if diff := cmp.Diff([]string{"log", "notify", "kv", "files", "http", "config"}, p.Granted()); diff != "" {
		t.Errorf("Granted (-want +got):\n%s", diff)
	}
}

func TestFiles(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "a.json"), `{"a":1}`)
	write(filepath.Join(root, "sub", "b.json"), `[2]`)
	write(filepath.Join(root, "big.json"), `"`+strings.Repeat("x", 200)+`"`)
	write(filepath.Join(outside, "secret.json"), `{"secret":true}`)
	write(filepath.Join(outside, "linked.json"), `{"secret":2}`)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(root, "escape.json")))
	must(os.Symlink(outside, filepath.Join(root, "escdir")))
	must(os.Symlink("a.json", filepath.Join(root, "inner.json")))
	must(os.Symlink(filepath.Join(root, "a.json"), filepath.Join(root, "absinner.json")))
	must(os.Link(filepath.Join(outside, "linked.json"), filepath.Join(root, "hard.json")))
	must(syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))

	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{Grants: Grants{Files: []string{root}}, Limits: Limits{FileMaxBytes: 100}})

	tests := []struct {
		name, req string
		n         int32 // errno, or -100 for "success"
		out       string
	}{
		{"read", "r" + root + "/a.json", -100, `{"a":1}`},
		{"read sub", "r" + root + "/sub/b.json", -100, `[2]`},
		{"read via inner symlink", "r" + root + "/inner.json", -100, `{"a":1}`},
		{"absolute symlink inside", "r" + root + "/absinner.json", abi.ErrnoDenied, ""},
		{"dotdot", "r" + root + "/sub/../a.json", abi.ErrnoDenied, ""},
		{"dotdot escape", "r" + root + "/../outside/secret.json", abi.ErrnoDenied, ""},
		{"absolute outside", "r" + outside + "/secret.json", abi.ErrnoDenied, ""},
		{"etc passwd", "r/etc/passwd", abi.ErrnoDenied, ""},
		{"relative", "ra.json", abi.ErrnoDenied, ""},
		{"nul", "r" + root + "/a.json\x00x", abi.ErrnoInvalid, ""},
		{"symlink escape", "r" + root + "/escape.json", abi.ErrnoDenied, ""},
		{"symlinked dir escape", "r" + root + "/escdir/secret.json", abi.ErrnoDenied, ""},
		{"hard link", "r" + root + "/hard.json", abi.ErrnoDenied, ""},
		{"fifo", "r" + root + "/fifo", abi.ErrnoDenied, ""},
		{"dev null", "r/dev/null", abi.ErrnoDenied, ""},
		{"directory", "r" + root + "/sub", abi.ErrnoDenied, ""},
		{"missing", "r" + root + "/nope.json", abi.ErrnoNotFound, ""},
		{"too large", "r" + root + "/big.json", abi.ErrnoTooLarge, ""},
		{"stat outside", "s" + outside, abi.ErrnoDenied, ""},
		{"stat fifo", "s" + root + "/fifo", abi.ErrnoDenied, ""},
		{"list escape", "l" + root + "/escdir", abi.ErrnoDenied, ""},
		{"roots", "R", -100, `["` + root + `"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callCaps(t, p, tt.req)
			if tt.n != -100 {
				if r.N != tt.n {
					t.Errorf("n = %d (%s), want %d", r.N, r.Out, tt.n)
				}
				return
			}
			if r.N < 0 || string(r.Out) != tt.out {
				t.Errorf("got n=%d out=%s, want %s", r.N, r.Out, tt.out)
			}
		})
	}

	t.Run("stat", func(t *testing.T) {
		r := callCaps(t, p, "s"+root+"/a.json")
		var fi abi.FileInfo
		if err := json.Unmarshal(r.Out, &fi); err != nil {
			t.Fatal(err)
		}
		if fi.Path != root+"/a.json" || fi.Name != "a.json" || fi.Size != 7 || fi.Dir {
			t.Errorf("stat = %+v", fi)
		}
	})
	t.Run("list", func(t *testing.T) {
		r := callCaps(t, p, "l"+root)
		var list []abi.FileInfo
		if err := json.Unmarshal(r.Out, &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fi := range list {
			names = append(names, fi.Name)
		}
		// absinner.json, escape.json, escdir, hard.json and fifo are left out.
		if diff := cmp.Diff([]string{"a.json", "big.json", "inner.json", "sub"}, names); diff != "" {
			t.Errorf("list (-want +got):\n%s", diff)
		}
	})
	if n := e.rec.deniedFor("caps/files/"); n < 10 {
		t.Errorf("observed %d file denials", n)
	}
}

func TestKV(t *testing.T) {
	dataDir := t.TempDir()
	e := newEnv(t, RuntimeConfig{DataDir: dataDir})
	p := e.load(t, "caps", Config{Grants: Grants{KV: true}, Limits: Limits{KVQuotaBytes: 64}})
	steps := []struct {
		req string
		n   int32
		out string
	}{
		{"gmissing", abi.ErrnoNotFound, "null"},
		{`kkey={"v":1}`, 0, "null"},
		{"gkey", 7, `{"v":1}`},
		{"kbig=" + strings.Repeat("x", 80), abi.ErrnoQuota, "null"},
		{"k=novalue", abi.ErrnoInvalid, "null"},
		{"dkey", 0, "null"},
		{"gkey", abi.ErrnoNotFound, "null"},
		{`kkeep="kept"`, 0, "null"},
	}
	for _, s := range steps {
		r := callCaps(t, p, s.req)
		if r.N != s.n || string(r.Out) != s.out {
			t.Errorf("%s: got n=%d out=%s, want n=%d out=%s", s.req, r.N, r.Out, s.n, s.out)
		}
	}
	p.Close(context.Background())
	info, err := os.Stat(filepath.Join(dataDir, "caps", kvLogName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		t.Errorf("kv file mode %v is open to others", info.Mode().Perm())
	}

	// A new runtime over the same data dir sees the value.
	e2 := newEnv(t, RuntimeConfig{DataDir: dataDir})
	p2 := e2.load(t, "caps", Config{Grants: Grants{KV: true}})
	if r := callCaps(t, p2, "gkeep"); string(r.Out) != `"kept"` {
		t.Errorf("after restart: %+v", r)
	}
}

func TestConfigLogNotify(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{Grants: Grants{Log: true, Notify: true, Config: map[string]string{"greeting": `"hi"`}}})
	if r := callCaps(t, p, "cgreeting"); r.N != 4 || string(r.Out) != `"hi"` {
		t.Errorf("config_get = %+v", r)
	}
	if r := callCaps(t, p, "cmissing"); r.N != abi.ErrnoNotFound {
		t.Errorf("config_get missing = %+v", r)
	}
	if r := callCaps(t, p, "Lhello operator"); r.N != 0 {
		t.Errorf("log = %+v", r)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "hello operator") || !strings.Contains(logs, "plugin=caps") {
		t.Errorf("log line missing or without the plugin name:\n%s", logs)
	}
	if r := callCaps(t, p, "ncaps://thing"); r.N != 0 {
		t.Errorf("notify in scheme = %+v", r)
	}
	if r := callCaps(t, p, "ngood://hello"); r.N != abi.ErrnoDenied {
		t.Errorf("notify outside scheme = %+v, want denied", r)
	}
	if r := callCaps(t, p, "m"); r.N != 0 {
		t.Errorf("notify list changed = %+v", r)
	}
	e.rt.Close(context.Background()) // flushes the queue
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	if diff := cmp.Diff([]string{"caps 1 caps://thing", "caps 2 "}, e.rec.notes); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

func TestFloods(t *testing.T) {
	e := newEnv(t, RuntimeConfig{NotifyQueue: 50})
	p := e.load(t, "flood", Config{Grants: Grants{Log: true, Notify: true},
		Limits: Limits{LogRate: 1, LogBurst: 20, NotifyRate: 1, NotifyBurst: 100}})
	out, err := invoke(p, context.Background(), abi.OpCallTool, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Log, Notify int }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	// The burst plus what refills during the call; far below 10,000.
	if got.Log < 20 || got.Log > 25 {
		t.Errorf("accepted %d log lines, want about the burst of 20", got.Log)
	}
	if got.Notify > 100 {
		t.Errorf("accepted %d notifications, want at most the burst of 100", got.Notify)
	}
	if n := strings.Count(e.logs.String(), "a log line from a flood"); n != got.Log {
		t.Errorf("%d lines logged, %d accepted", n, got.Log)
	}
	if e.rec.deniedFor("flood/log/rate limited") < 9000 || e.rec.deniedFor("flood/notify/") < 9000 {
		t.Error("drops were not observed")
	}
	// Still serving.
	if _, err := invoke(p, context.Background(), abi.OpCallTool, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
}

// blockingNotifier blocks until released, to fill the queue.
type blockingNotifier struct{ release chan struct{} }

func (b blockingNotifier) Notify(string, int32, string) { <-b.release }

func TestNotifyQueueFullDrops(t *testing.T) {
	bn := blockingNotifier{release: make(chan struct{})}
	rt, err := NewRuntime(context.Background(), RuntimeConfig{Notifier: bn, NotifyQueue: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.Compile(context.Background(), fixture(t, "flood"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(context.Background(), m, Config{PoolSize: 1, Grants: Grants{Log: true, Notify: true}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := invoke(p, context.Background(), abi.OpCallTool, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Notify int }
	json.Unmarshal(out, &got)
	// One in delivery plus 5 queued.
	if got.Notify > 6 {
		t.Errorf("accepted %d notifications with a queue of 5", got.Notify)
	}
	if rt.DroppedNotifications() == 0 {
		t.Error("no drop counted")
	}
	close(bn.release)
	p.Close(context.Background())
	rt.Close(context.Background())
}

func httpReq(u string) string {
	b, _ := json.Marshal(abi.HTTPRequest{Method: "GET", URL: u, Headers: map[string]string{"X-Test": "1"}})
	return "h" + string(b)
}

func TestHTTP(t *testing.T) {
	var target *httptest.Server
	target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "hello %s", r.Header.Get("X-Test"))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2000)))
		case "/to-localhost":
			u, _ := url.Parse(target.URL)
			http.Redirect(w, r, "http://localhost:"+u.Port()+"/ok", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	}))
	defer target.Close()
	tu, _ := url.Parse(target.URL)

	tests := []struct {
		name    string
		grants  Grants
		url     string
		n       int32 // errno, or 0 for success
		body    string
		limitsB int64
	}{
		{"loopback refused", Grants{HTTPHosts: []string{"127.0.0.1"}}, target.URL + "/ok", abi.ErrnoDenied, "", 0},
		{"name resolving to loopback refused", Grants{HTTPHosts: []string{"localhost"}}, "http://localhost:" + tu.Port() + "/ok", abi.ErrnoDenied, "", 0},
		{"ungranted host", Grants{HTTPHosts: []string{"example.com"}, AllowPrivate: true}, target.URL + "/ok", abi.ErrnoDenied, "", 0},
		{"allowed with AllowPrivate", Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true}, target.URL + "/ok", 0, "hello 1", 0},
		{"host:port grant", Grants{HTTPHosts: []string{tu.Host}, AllowPrivate: true}, target.URL + "/ok", 0, "hello 1", 0},
		{"redirect within grant", Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true}, target.URL + "/to-self", 0, "hello 1", 0},
		{"redirect to ungranted host", Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true}, target.URL + "/to-localhost", abi.ErrnoDenied, "", 0},
		{"file scheme", Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true}, "file:///etc/passwd", abi.ErrnoDenied, "", 0},
		{"response too large", Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true}, target.URL + "/big", abi.ErrnoTooLarge, "", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "caps", Config{PoolSize: 1, Grants: tt.grants, Limits: Limits{HTTPMaxBytes: tt.limitsB}})
			r := callCaps(t, p, httpReq(tt.url))
			if tt.n != 0 {
				if r.N != tt.n {
					t.Errorf("n = %d (%s), want %d", r.N, r.Out, tt.n)
				}
				return
			}
			var resp abi.HTTPResponse
			if err := json.Unmarshal(r.Out, &resp); err != nil {
				t.Fatalf("n=%d out=%s: %v", r.N, r.Out, err)
			}
			if resp.Status != 200 || string(resp.Body) != tt.body || resp.Headers["Content-Type"] != "text/plain" {
				t.Errorf("response = %d %q %v", resp.Status, resp.Body, resp.Headers)
			}
		})
	}

	// A redirect from a "public" server to a loopback address is refused
	// by the dial check, even to a granted host. The first server is made
	// to look public by vetting its port only.
	t.Run("redirect to loopback", func(t *testing.T) {
		inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal") }))
		defer inner.Close()
		outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, inner.URL, http.StatusFound)
		}))
		defer outer.Close()
		ou, _ := url.Parse(outer.URL)
		outerPort, _ := strconv.Atoi(ou.Port())

		e := newEnv(t, RuntimeConfig{})
		p := e.load(t, "caps", Config{PoolSize: 1, Grants: Grants{HTTPHosts: []string{"127.0.0.1"}}})
		f := p.caps.http
		f.checkAddr = func(ap netip.AddrPort) error {
			if int(ap.Port()) == outerPort {
				return nil
			}
			return f.defaultCheckAddr(ap)
		}
		if r := callCaps(t, p, httpReq(inner.URL)); r.N != abi.ErrnoDenied {
			t.Errorf("direct: n = %d, want denied", r.N)
		}
		if r := callCaps(t, p, httpReq(outer.URL)); r.N != abi.ErrnoDenied {
			t.Errorf("via redirect: n = %d (%s), want denied", r.N, r.Out)
		}
		if e.rec.deniedFor("caps/http/"+string(denyAddress)) != 2 {
			t.Errorf("denials: %v", e.rec.denied)
		}
		if !strings.Contains(e.logs.String(), "127.0.0.1") {
			t.Errorf("the log does not name the refused address:\n%s", e.logs)
		}
	})
}

// TestLoopbackIPv6FormsRefusedAtDial: granted hosts spelled as IPv6
// addresses that embed 127.0.0.1 (NAT64, IPv4-compatible) are refused by
// the dial check, as the loopback they are, before any connection is
// attempted. Before, they were dialled as public.
func TestLoopbackIPv6FormsRefusedAtDial(t *testing.T) {
	for _, host := range []string{"64:ff9b::7f00:1", "::127.0.0.1", "64:ff9b:1::7f00:1"} {
		t.Run(host, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "caps", Config{PoolSize: 1, Grants: Grants{HTTPHosts: []string{host}},
				Limits: Limits{HTTPTimeout: time.Second}})
			if r := callCaps(t, p, httpReq("http://["+host+"]:8080/")); r.N != abi.ErrnoDenied {
				t.Fatalf("n = %d, want denied", r.N)
			}
			if e.rec.deniedFor("caps/http/"+string(denyAddress)) != 1 {
				t.Errorf("denials: %v, want one for the address", e.rec.denied)
			}
		})
	}
}

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fc00::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"100.64.0.1", false},
		{"255.255.255.255", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"::ffff:10.0.0.1", false},
		// NAT64 (RFC 6052 well-known prefix): judged by the IPv4 address.
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::127.0.0.1", false},
		{"64:ff9b::a9fe:a9fe", false}, // 169.254.169.254, cloud metadata
		{"64:ff9b::c0a8:101", false},  // 192.168.1.1
		{"64:ff9b::808:808", true},
		// Local-use NAT64 (RFC 8215): the operator's own translator, refused whole.
		{"64:ff9b:1::7f00:1", false},
		{"64:ff9b:1:ffff::808:808", false},
		// IPv4-compatible (deprecated ::/96).
		{"::127.0.0.1", false},
		{"::7f00:1", false},
		{"::10.0.0.1", false},
		{"::8.8.8.8", true},
		// 6to4 (2002::/16): the IPv4 address in bits 16-47.
		{"2002:7f00:1::1", false},
		{"2002:a00:1::1", false},
		{"2002:808:808::1", true},
		// Teredo: refused whole.
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := publicAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("publicAddr(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
}

// TestKVSharedAcrossVersions: two loaded versions of one plugin (an old one
// draining while a new one serves) share one store.
func TestKVSharedAcrossVersions(t *testing.T) {
	dataDir := t.TempDir()
	e := newEnv(t, RuntimeConfig{DataDir: dataDir})
	old := e.load(t, "caps", Config{Grants: Grants{KV: true}})
	cur := e.load(t, "caps", Config{Grants: Grants{KV: true}})
	if r := callCaps(t, old, `kx="from old"`); r.N != 0 {
		t.Fatalf("set: %+v", r)
	}
	if r := callCaps(t, cur, "gx"); string(r.Out) != `"from old"` {
		t.Errorf("new version reads %+v", r)
	}
	old.Close(context.Background())
	if r := callCaps(t, cur, `ky=2`); r.N != 0 {
		t.Errorf("set after the old version closed: %+v", r)
	}
	if r := callCaps(t, cur, "gx"); string(r.Out) != `"from old"` {
		t.Errorf("after close: %+v", r)
	}
}

// TestHTTPResponseHeadersCapped: a granted loopback upstream answering
// many or large headers gets ErrnoTooLarge, whether net/http's own cap on
// the header block stops reading (20,000 lines) or fetch's exact caps do
// (150 lines, 40 KiB of values); header bytes count in the response
// limit. Before, every header reached the guest: 800,000 of them made an
// 11 MB output from one fetch.
func TestHTTPResponseHeadersCapped(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		for i := range n {
			w.Header().Add(fmt.Sprintf("X-H%d", i), strings.Repeat("v", size))
		}
		fmt.Fprint(w, strings.Repeat("b", 1000))
	}))
	defer upstream.Close()
	tests := []struct {
		name     string
		n, size  int
		maxBytes int64
		want     int32 // 0: success
	}{
		{"few small headers", 10, 10, 0, 0},
		{"too many for net/http", 20000, 2, 0, abi.ErrnoTooLarge},
		{"too many lines", 150, 2, 0, abi.ErrnoTooLarge},
		{"too many bytes", 40, 1024, 0, abi.ErrnoTooLarge},
		{"headers and body over the response limit", 10, 100, 1500, abi.ErrnoTooLarge},
		{"headers and body within the response limit", 10, 10, 1500, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "caps", Config{PoolSize: 1,
				Grants: Grants{HTTPHosts: []string{"127.0.0.1"}, AllowPrivate: true},
				Limits: Limits{HTTPMaxBytes: tt.maxBytes}})
			r := callCaps(t, p, httpReq(fmt.Sprintf("%s/?n=%d&size=%d", upstream.URL, tt.n, tt.size)))
			if tt.want != 0 {
				if r.N != tt.want {
					t.Errorf("n = %d (%d bytes of output), want %d", r.N, len(r.Out), tt.want)
				}
				return
			}
			var resp abi.HTTPResponse
			if err := json.Unmarshal(r.Out, &resp); err != nil || len(resp.Body) != 1000 || resp.Headers["X-H0"] == "" {
				t.Errorf("n = %d, response %d headers, %d body bytes (%v)", r.N, len(resp.Headers), len(resp.Body), err)
			}
		})
	}
}

// TestDeniedCallNamesGrant: the first call denied for want of a grant logs
// the capability and the operator's key that grants it, once per
// capability; the guest sees only ErrnoDenied.
func TestDeniedCallNamesGrant(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "caps", Config{GrantKeys: map[string]string{abi.CapConfig: "plugin.caps.grants.config"}})
	for range 3 {
		if r := callCaps(t, p, "ck"); r.N != abi.ErrnoDenied {
			t.Fatalf("config_get = %d, want ErrnoDenied", r.N)
		}
	}
	logs := e.logs.String()
	if n := strings.Count(logs, "grant=plugin.caps.grants.config"); n != 1 {
		t.Errorf("%d log lines name the grant, want 1:\n%s", n, logs)
	}
	// A capability the manifest does not request: the log says so instead.
	u := e.load(t, "ungranted", Config{})
	if _, err := invoke(u, context.Background(), abi.OpCallTool, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "capability its manifest does not request") {
		t.Errorf("no line for an unrequested capability:\n%s", logs)
	}
}
