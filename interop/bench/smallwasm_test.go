package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmallPluginsServe: generated small plugins load in the real
// registry of the binary under test (CORRAL_BIN, as in interop: make
// test-wasmtime's wasmtime build; else bin/corral) and each answers its
// own read, prompt and tool; the list holds every plugin's resource.
func TestSmallPluginsServe(t *testing.T) {
	corral := os.Getenv("CORRAL_BIN")
	if corral == "" {
		var err error
		if corral, err = filepath.Abs(filepath.Join("..", "..", "bin", "corral")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(corral); err != nil {
		t.Skipf("%s missing (make build): %v", corral, err)
	}
	dir := t.TempDir()
	names, err := writeSmallPlugins(filepath.Join(dir, "plugins"), 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "corral.yaml")
	if err := corralConfig(cfg, filepath.Join(dir, "plugins"), filepath.Join(dir, "cache"), names, 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := start(ctx, "corral-small", filepath.Join(dir, "corral.log"), nil, time.Minute, readyz,
		corral, "serve", "--config", cfg, "--http", "127.0.0.1:{port}")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()

	cl := newClient(1)
	defer cl.CloseIdleConnections()
	var buf bytes.Buffer
	result := func(c call) map[string]any {
		t.Helper()
		if err := do(ctx, cl, p.url, c, c.body(), &buf); err != nil {
			t.Fatalf("%s %s: %v", c.method, c.name, err)
		}
		var r struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", c.method, err, buf.Bytes())
		}
		return r.Result
	}
	text := func(v any, path ...any) string {
		for _, k := range path {
			switch k := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				a, _ := v.([]any)
				if k >= len(a) {
					return ""
				}
				v = a[k]
			}
		}
		s, _ := v.(string)
		return s
	}
	for _, name := range names {
		uri := name + "://doc"
		read := result(call{"resources/read", uri, `"uri":"` + uri + `",`})
		if got := text(read, "contents", 0, "text"); got != smallDocText(name) {
			t.Errorf("read %s = %q, want %q", uri, got, smallDocText(name))
		}
		prompt := result(call{"prompts/get", name + "-greet", `"name":"` + name + `-greet",`})
		if got := text(prompt, "messages", 0, "content", "text"); got != smallPromptText(name) {
			t.Errorf("prompt of %s = %q, want %q", name, got, smallPromptText(name))
		}
		tool := result(call{"tools/call", name + "-echo", `"name":"` + name + `-echo","arguments":{},`})
		if got := text(tool, "content", 0, "text"); got != smallToolText(name) {
			t.Errorf("tool of %s = %q, want %q", name, got, smallToolText(name))
		}
	}
	list := result(callList)
	var uris []string
	for _, r := range list["resources"].([]any) {
		uris = append(uris, text(r, "uri"))
	}
	if got, want := strings.Join(uris, " "), "s00000://doc s00001://doc s00002://doc"; got != want {
		t.Errorf("resources/list = %s, want %s", got, want)
	}
}

// TestSmallPluginsDistinct: every generated plugin is a distinct module
// (its own digest, so its own compilation), and the encoders are right at
// the LEB128 boundaries the module uses.
func TestSmallPluginsDistinct(t *testing.T) {
	a, b := smallPlugin(smallName(1)), smallPlugin(smallName(2))
	if bytes.Equal(a, b) {
		t.Fatal("two small plugins are the same bytes")
	}
	if !bytes.HasPrefix(a, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("not a module: % x", a[:8])
	}
	for _, tc := range []struct {
		v    int32
		want []byte
	}{{3, []byte{0x03}}, {63, []byte{0x3f}}, {64, []byte{0xc0, 0x00}}, {1024, []byte{0x80, 0x08}}, {65536, []byte{0x80, 0x80, 0x04}}, {-1, []byte{0x7f}}} {
		if got := sleb(nil, tc.v); !bytes.Equal(got, tc.want) {
			t.Errorf("sleb(%d) = % x, want % x", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    uint32
		want []byte
	}{{0, []byte{0x00}}, {127, []byte{0x7f}}, {128, []byte{0x80, 0x01}}, {900, []byte{0x84, 0x07}}} {
		if got := uleb(nil, tc.v); !bytes.Equal(got, tc.want) {
			t.Errorf("uleb(%d) = % x, want % x", tc.v, got, tc.want)
		}
	}
}
