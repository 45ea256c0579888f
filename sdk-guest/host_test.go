//go:build !wasip1

package corral

import (
	"errors"
	"testing"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

func TestFilesOnFakeHost(t *testing.T) {
	h := NewFakeHost(abi.CapFiles)
	h.Roots = []string{"/data"}
	mod := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	h.AddFile("/data/a.txt", []byte("hello"), mod)
	h.AddFile("/data/sub/b.bin", []byte{0, 1}, mod)
	h.AddFile("/secret/x", []byte("no"), mod)
	defer UseHost(h)()

	roots, err := Files.Roots()
	if err != nil || !cmp.Equal(roots, []string{"/data"}) {
		t.Errorf("Roots() = %v, %v", roots, err)
	}
	data, err := Files.Read("/data/a.txt")
	if err != nil || string(data) != "hello" {
		t.Errorf("Read = %q, %v", data, err)
	}
	fi, err := Files.Stat("/data/sub")
	if diff := cmp.Diff(abi.FileInfo{Path: "/data/sub", Name: "sub", Dir: true, ModTime: "2025-01-02T03:04:05Z"}, fi); diff != "" || err != nil {
		t.Errorf("Stat dir: %v (-want +got):\n%s", err, diff)
	}
	list, err := Files.List("/data")
	if err != nil {
		t.Fatal(err)
	}
	want := []abi.FileInfo{
		{Path: "/data/a.txt", Name: "a.txt", Size: 5, ModTime: "2025-01-02T03:04:05Z"},
		{Path: "/data/sub", Name: "sub", Dir: true, ModTime: "2025-01-02T03:04:05Z"},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	errTests := []struct {
		name string
		err  error
		want error
	}{
		{"outside roots", second(Files.Read("/secret/x")), ErrDenied},
		{"missing", second(Files.Read("/data/none")), ErrNotFound},
		{"unclean", second(Files.Read("/data/../secret/x")), ErrInvalid},
		{"read a directory", second(Files.Read("/data/sub")), ErrInvalid},
		{"list a file", second(Files.List("/data/a.txt")), ErrInvalid},
		{"kv not granted", second(KV.Get("k")), ErrDenied},
		{"log not granted", Log(abi.LogInfo, "x"), ErrDenied},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("error = %v, want %v", tt.err, tt.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

func TestOtherCapabilities(t *testing.T) {
	h := NewFakeHost(abi.CapKV, abi.CapLog, abi.CapNotify, abi.CapConfig, abi.CapHTTP)
	h.KVQuota = 10
	h.Config["data"] = "issues.json"
	h.HTTP = func(req abi.HTTPRequest) (abi.HTTPResponse, int32) {
		if req.URL == "https://down.example" {
			return abi.HTTPResponse{}, abi.ErrnoIO
		}
		return abi.HTTPResponse{Status: 200, Body: append([]byte(req.Method+" "), req.Body...)}, 0
	}
	defer UseHost(h)()

	if err := KV.Set("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := KV.Get("k"); err != nil || string(v) != "v" {
		t.Errorf("KV.Get = %q, %v", v, err)
	}
	if err := KV.Set("big", []byte("0123456789")); !errors.Is(err, ErrQuota) {
		t.Errorf("over quota: %v", err)
	}
	if err := KV.Delete("k"); err != nil {
		t.Fatal(err)
	}
	if _, err := KV.Get("k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted key: %v", err)
	}
	if v, err := Config.Get("data"); err != nil || v != "issues.json" {
		t.Errorf("Config.Get = %q, %v", v, err)
	}
	if _, err := Config.Get("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Config.Get missing: %v", err)
	}
	resp, err := HTTP.Post("https://api.example", "text/plain", []byte("body"))
	if err != nil || resp.Status != 200 || string(resp.Body) != "POST body" {
		t.Errorf("HTTP.Post = %+v, %v", resp, err)
	}
	if _, err := HTTP.Get("https://down.example", nil); !errors.Is(err, ErrIO) {
		t.Errorf("HTTP.Get down: %v", err)
	}
	if err := Logf(abi.LogWarn, "n=%d", 3); err != nil {
		t.Fatal(err)
	}
	if err := NotifyResourceUpdated("x://a"); err != nil {
		t.Fatal(err)
	}
	if err := NotifyToolsListChanged(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FakeLog{{Level: abi.LogWarn, Message: "n=3"}}, h.Logs()); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	wantNotes := []FakeNotification{{Kind: abi.NotifyResourceUpdated, Payload: "x://a"}, {Kind: abi.NotifyToolsListChanged}}
	if diff := cmp.Diff(wantNotes, h.Notifications()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want abi.Error
	}{
		{"typed", InvalidParams("bad"), abi.Error{Code: abi.CodeInvalidParams, Message: "bad"}},
		{"errno not found", errnoError("file_read", abi.ErrnoNotFound), abi.Error{Code: abi.CodeNotFound, Message: "corral: file_read: not found"}},
		{"errno io", errnoError("http_fetch", abi.ErrnoIO), abi.Error{Code: abi.CodeUnavailable, Message: "corral: http_fetch: i/o error"}},
		{"errno denied", errnoError("kv_get", abi.ErrnoDenied), abi.Error{Code: abi.CodeInternal, Message: "corral: kv_get: permission denied"}},
		{"unknown errno", errnoError("log", -42), abi.Error{Code: abi.CodeInternal, Message: "corral: log: errno -42"}},
		{"plain", errors.New("oops"), abi.Error{Code: abi.CodeInternal, Message: "oops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, *toABIError(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
