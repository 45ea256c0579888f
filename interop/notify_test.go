package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// filesWasm is the files plugin, whose file:// resources the host watches.
var filesWasm = filepath.Join(repoRoot, "build", "plugins", "files.wasm")

// notifyFixture is a server setup for notification tests: a plugin
// directory holding the files plugin, granted one root with one file. A
// second plugin can be dropped into the directory to change the lists.
type notifyFixture struct {
	dir, root, file, cfg string
}

func newNotifyFixture(t *testing.T) *notifyFixture {
	t.Helper()
	if why := missingBuild(corralBin, filesWasm, conformanceWasm); why != "" {
		t.Skip(why)
	}
	base := t.TempDir()
	f := &notifyFixture{dir: filepath.Join(base, "plugins"), root: filepath.Join(base, "root"), cfg: filepath.Join(base, "corral.yaml")}
	f.file = filepath.Join(f.root, "watched.txt")
	for _, d := range []string{f.dir, f.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.file, []byte("v0"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filesWasm, filepath.Join(f.dir, "files.wasm"))
	cfg := fmt.Sprintf("plugins:\n  dir: %s\n  cacheDir: %s\n  debounce: 100ms\nplugin:\n  files:\n    grants:\n      files: [%s]\n  conformance:\n    grants:\n      notify: true\n", f.dir, notifyCacheDir(t), f.root)
	if err := os.WriteFile(f.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// notifyCacheDir is a compilation cache (in the ignored build/ folder)
// shared by the notification tests' servers, so that each run compiles the
// plugins once, not once per server.
func notifyCacheDir(t testing.TB) string {
	d := filepath.Join(repoRoot, "build", "interop-cache")
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// uri is the watched file's resource URI, as plugins/files names it.
func (f *notifyFixture) uri() string { return "file://" + filepath.ToSlash(f.file) }

// stdio returns a command serving the fixture on stdin/stdout.
func (f *notifyFixture) stdio(stderr *lockedBuffer) *exec.Cmd {
	cmd := exec.Command(corralBin, "serve", "--config", f.cfg, "--log-level", "debug")
	cmd.Stderr = stderr
	return cmd
}

// http starts an HTTP server for the fixture and returns its base URL.
func (f *notifyFixture) http(t *testing.T) string {
	t.Helper()
	return startedHTTPServer(t, "--config", f.cfg).url
}

// edit rewrites the watched file.
func (f *notifyFixture) edit(t *testing.T, n int) {
	t.Helper()
	if err := os.WriteFile(f.file, []byte(fmt.Sprintf("v%d", n)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// addPlugin drops the conformance plugin into the directory.
func (f *notifyFixture) addPlugin(t *testing.T) {
	t.Helper()
	copyFile(t, conformanceWasm, filepath.Join(f.dir, "conformance.wasm"))
}

// heard collects what a client's notification handlers received.
type heard struct {
	updated     chan string // URIs of notifications/resources/updated
	listChanged chan string // methods of */list_changed
}

func newHeard() *heard {
	return &heard{updated: make(chan string, 256), listChanged: make(chan string, 256)}
}

func (h *heard) put(ch chan string, v string) {
	select {
	case ch <- v:
	default: // the test only needs the first few
	}
}

// expectUpdate edits the file until the client hears its update: the
// client may still be opening its stream when the first edit happens.
func expectUpdate(t *testing.T, f *notifyFixture, h *heard) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	f.edit(t, 1)
	for n := 2; ; n++ {
		select {
		case uri := <-h.updated:
			if uri != f.uri() {
				t.Fatalf("update for %s, want only %s", uri, f.uri())
			}
			return
		case <-tick.C:
			f.edit(t, n)
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s", f.uri())
		}
	}
}

// expectListChanged adds a plugin and waits for resources/list_changed.
func expectListChanged(t *testing.T, f *notifyFixture, h *heard) {
	t.Helper()
	for len(h.listChanged) > 0 {
		<-h.listChanged
	}
	f.addPlugin(t)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-h.listChanged:
			if m == "notifications/resources/list_changed" {
				return
			}
		case <-deadline:
			t.Fatal("no notifications/resources/list_changed after a plugin was added")
		}
	}
}

// goSDKNotify connects the official Go SDK client with notification
// handlers, subscribes to the fixture's file, and checks both kinds of
// notification.
func goSDKNotify(t *testing.T, f *notifyFixture, tr mcp.Transport, era string) {
	h := newHeard()
	c := mcp.NewClient(&mcp.Implementation{Name: "corral-interop-go-sdk", Version: "1.8.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			h.put(h.updated, r.Params.URI)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			h.put(h.listChanged, "notifications/resources/list_changed")
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			h.put(h.listChanged, "notifications/tools/list_changed")
		},
	})
	ctx := testContext(t)
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("go-sdk connect (%s): %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().Capabilities.Resources; got == nil || !got.Subscribe || !got.ListChanged {
		t.Fatalf("resources capability %+v, want subscribe and listChanged", got)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: f.uri()}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	expectUpdate(t, f, h)
	expectListChanged(t, f, h)
}

func TestGoSDKNotifications(t *testing.T) {
	for _, era := range eras {
		t.Run("stdio/"+era, func(t *testing.T) {
			f := newNotifyFixture(t)
			stderr := &lockedBuffer{}
			defer logOnFailure(t, stderr)
			goSDKNotify(t, f, &mcp.CommandTransport{Command: f.stdio(stderr)}, era)
		})
		t.Run("http/"+era, func(t *testing.T) {
			f := newNotifyFixture(t)
			goSDKNotify(t, f, &mcp.StreamableClientTransport{Endpoint: f.http(t) + "/mcp", MaxRetries: -1}, era)
		})
		t.Run("ws/"+era, func(t *testing.T) {
			f := newNotifyFixture(t)
			goSDKNotify(t, f, &wsTransport{url: "ws" + strings.TrimPrefix(f.http(t), "http") + "/ws"}, era)
		})
	}
}

func mcpGoNotify(t *testing.T, f *notifyFixture, tr mgtransport.Interface, era string) {
	h := newHeard()
	ctx := testContext(t)
	c := mgclient.NewClient(tr, mgclient.WithProtocolVersion(era), mgclient.WithDiscoverTimeout(30*time.Second))
	c.OnNotification(func(n mgmcp.JSONRPCNotification) {
		switch n.Method {
		case "notifications/resources/updated":
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			h.put(h.updated, uri)
		case "notifications/resources/list_changed", "notifications/tools/list_changed", "notifications/prompts/list_changed":
			h.put(h.listChanged, n.Method)
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	req := mgmcp.InitializeRequest{}
	req.Params.ClientInfo = mgmcp.Implementation{Name: "corral-interop-mcp-go", Version: "1.2.1"}
	req.Params.ProtocolVersion = era
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("mcp-go initialize (%s): %v", era, err)
	}
	sub := mgmcp.SubscribeRequest{}
	sub.Params.URI = f.uri()
	//lint:ignore SA1019 resources/subscribe is the 2025-11-25 way, and on 2026 it seeds the listen filter
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if era == era2026 {
		stop, err := c.ListenAsync(ctx, mgmcp.SubscriptionFilter{
			ResourcesListChanged: true, ResourceSubscriptions: []string{f.uri()},
		}, func(err error) { t.Errorf("listen: %v", err) })
		if err != nil {
			t.Fatalf("ListenAsync: %v", err)
		}
		t.Cleanup(stop)
	}
	expectUpdate(t, f, h)
	expectListChanged(t, f, h)
}

func TestMcpGoNotifications(t *testing.T) {
	for _, era := range eras {
		t.Run("stdio/"+era, func(t *testing.T) {
			f := newNotifyFixture(t)
			stderr := &lockedBuffer{}
			defer logOnFailure(t, stderr)
			mcpGoNotify(t, f, stdioTransport(f.stdio(stderr), stderr), era)
		})
		t.Run("http/"+era, func(t *testing.T) {
			f := newNotifyFixture(t)
			var opts []mgtransport.StreamableHTTPCOption
			if era == era2025 {
				//lint:ignore SA1019 the 2025-11-25 session's GET stream is what this era uses
				opts = append(opts, mgtransport.WithContinuousListening())
			}
			tr, err := mgtransport.NewStreamableHTTP(f.http(t)+"/mcp", opts...)
			if err != nil {
				t.Fatal(err)
			}
			mcpGoNotify(t, f, tr, era)
		})
	}
}

func logOnFailure(t *testing.T, stderr *lockedBuffer) {
	if t.Failed() {
		t.Logf("server stderr:\n%s", tail(stderr.String(), 4000))
	}
}

// wsTransport is an mcp.Transport over corral's WebSocket endpoint: one
// JSON-RPC message per text frame (docs/websocket.md).
type wsTransport struct{ url string }

func (w *wsTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, w.url, nil)
	if err != nil {
		return nil, fmt.Errorf("ws dial: %w", err)
	}
	return &wsConn{c: c}, nil
}

type wsConn struct {
	c    *websocket.Conn
	wmu  sync.Mutex
	once sync.Once
}

func (w *wsConn) Read(context.Context) (jsonrpc.Message, error) {
	for {
		typ, b, err := w.c.ReadMessage()
		if err != nil {
			return nil, fmt.Errorf("ws read: %w", err)
		}
		if typ == websocket.TextMessage {
			return jsonrpc.DecodeMessage(b)
		}
	}
}

func (w *wsConn) Write(_ context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return fmt.Errorf("ws encode: %w", err)
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if err := w.c.WriteMessage(websocket.TextMessage, b); err != nil {
		return fmt.Errorf("ws write: %w", err)
	}
	return nil
}

func (w *wsConn) Close() error {
	var err error
	w.once.Do(func() {
		w.wmu.Lock()
		_ = w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		w.wmu.Unlock()
		err = w.c.Close()
	})
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

func (w *wsConn) SessionID() string { return "" }
