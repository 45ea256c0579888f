package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/registry"
)

// recordingPart is a Part that records, at each step, whether the app's
// HTTP listener accepts connections and whether its plugins are served.
type recordingPart struct {
	name     string
	addr     string
	a        **App
	startErr error
	log      *[]string
}

func (p *recordingPart) Name() string { return p.name }

func (p *recordingPart) Start(context.Context) error {
	*p.log = append(*p.log, p.name+" start: "+p.state())
	return p.startErr
}

func (p *recordingPart) Stop(context.Context) error {
	*p.log = append(*p.log, p.name+" stop: "+p.state())
	return nil
}

func (p *recordingPart) state() string {
	listening := "closed"
	if c, err := net.Dial("tcp", p.addr); err == nil {
		c.Close()
		listening = "listening"
	}
	return listening + ", " + strings.Join(serving(*p.a), ",")
}

var _ Part = (*recordingPart)(nil)

// serving names the plugins the app's registry serves.
func serving(a *App) []string {
	var names []string
	for _, f := range a.reg.Status().Files {
		if f.State == registry.StateServing {
			names = append(names, f.Plugin)
		}
	}
	return names
}

// TestAppPartsLifecycle checks the App's promise to its parts: they start,
// in order, before the listeners open and the plugins load, and stop, in
// reverse order, after the listeners are shut and the plugins closed; a
// part that fails to start fails Start with its name, and only the parts
// already started are stopped.
func TestAppPartsLifecycle(t *testing.T) {
	dir := pluginDir(t)
	addr := freeAddr(t)
	cfg, err := config.Load(config.Source{Flags: map[string]any{
		"plugins.dir": dir, "http.addr": addr, "log.level": "error",
		"plugins.cacheDir": filepath.Join(repoRoot, "build", "cache"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		failing string // the part whose Start fails, if any
		want    []string
	}{
		{"all start", "", []string{
			"bus start: closed, ", "kv start: closed, ",
			"kv stop: closed, ", "bus stop: closed, ",
		}},
		{"second fails", "kv", []string{
			"bus start: closed, ", "kv start: closed, ",
			"bus stop: closed, ",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			a, err := newApp(t.Context(), config.Source{}, cfg, &syncBuf{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"bus", "kv"} {
				p := &recordingPart{name: n, addr: addr, a: &a, log: &log}
				if n == tt.failing {
					p.startErr = errors.New("unreachable")
				}
				a.parts = append(a.parts, p)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			err = a.Start(ctx, cancel)
			if tt.failing != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.failing+": ") {
					t.Errorf("Start = %v, want the error of part %q", err, tt.failing)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.Get("http://" + addr + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("/readyz = %d while started", resp.StatusCode)
				}
				if got := serving(a); !slices.Contains(got, "conformance") {
					t.Errorf("serving %v while started, want conformance", got)
				}
			}
			a.Stop()
			if !slices.Equal(log, tt.want) {
				t.Errorf("parts saw\n%q\nwant\n%q", log, tt.want)
			}
		})
	}
}
