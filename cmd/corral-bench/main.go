// Command corral-bench serves the benchmark fixture from a native (Go)
// provider through corral's real protocol stack: host/catalog, host/mcp
// and the Streamable HTTP transport of host/transport, mounted at /mcp of
// an http.Server configured as `corral serve` configures its own. It is
// the "corral, native provider" row of `make bench` (interop/bench), which
// compares it with the same fixture served by the Wasm plugin
// plugins/bench/fixture, by peer SDKs and by a bare net/http floor.
//
// Usage:
//
//	corral-bench --http 127.0.0.1:0 [--resources 100] [--name bfx000]
//
// It prints "listening ADDR" on stdout once the listener is up and serves
// until stdin closes or it receives SIGINT/SIGTERM, so a harness that dies
// takes it along.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
	"github.com/corral-mcp/corral/host/transport"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "corral-bench: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("corral-bench", flag.ContinueOnError)
	addr := fs.String("http", "127.0.0.1:0", "listen `ADDR`ess")
	count := fs.Int("resources", 100, "number of resources, the 1 KiB document included")
	name := fs.String("name", "bfx000", "provider name and URI scheme")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	set, err := catalog.NewSet([]catalog.Provider{NewFixture(*name, *count)}, catalog.Options{})
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	srv := mcp.NewServer(catalog.New(set), mcp.Options{Name: "corral", Version: "bench", Logger: log})
	h := transport.NewHTTPHandler(srv, transport.HTTPOptions{Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	fmt.Printf("listening %s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the harness closes stdin (or dies): stop
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	go func() {
		<-ctx.Done()
		h.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// DocText is the fixture's 1 KiB text resource (the same bytes every
// server in the comparison serves).
var DocText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]

// Candidates are the 1,000 completion candidates of the prompt's "name".
var Candidates = func() []string {
	c := make([]string, 1000)
	for i := range c {
		c[i] = fmt.Sprintf("cand-%04d", i)
	}
	return c
}()

// NewFixture returns the benchmark fixture as a native provider: count
// resources (name://doc, 1 KiB, then name://item/NNNN), the prompt "greet"
// with arguments name and style, and completion of name over Candidates.
func NewFixture(name string, count int) catalog.Provider {
	m := abi.Manifest{Name: name, Version: "1.0.0", ABI: abi.Major, Title: "Benchmark fixture",
		Schemes: []string{name}}
	m.Resources = append(m.Resources, abi.Resource{URI: name + "://doc", Name: "doc", Title: "1 KiB document", MimeType: "text/plain"})
	for i := 1; i < count; i++ {
		m.Resources = append(m.Resources, abi.Resource{URI: fmt.Sprintf("%s://item/%04d", name, i),
			Name: fmt.Sprintf("item-%04d", i), MimeType: "text/plain"})
	}
	m.Prompts = []abi.Prompt{{Name: "greet", Description: "A greeting with two arguments",
		Arguments: []abi.PromptArgument{
			{Name: "name", Description: "Who to greet", Required: true},
			{Name: "style", Description: "How to answer", Required: true},
		}, Complete: []string{"name"}}}
	doc := name + "://doc"
	return &catalogtest.Provider{
		M: m,
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			text := DocText
			if r.URI != doc {
				text = "item " + r.URI
			}
			return map[string][]textContents{"contents": {{URI: r.URI, MimeType: "text/plain", Text: text}}}, nil
		},
		Prompt: func(_ context.Context, r abi.GetPromptRequest) (any, error) {
			text := "Hello, " + r.Arguments["name"] + "! Please answer in a " + r.Arguments["style"] + " style."
			msg, _ := json.Marshal(map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}})
			return abi.GetPromptResult{Description: "A greeting", Messages: []json.RawMessage{msg}}, nil
		},
		Complete: func(_ context.Context, r abi.CompleteRequest) (*abi.CompleteResult, error) {
			values := []string{}
			for _, c := range Candidates {
				if strings.HasPrefix(c, r.Argument.Value) {
					values = append(values, c)
				}
			}
			total := len(values)
			res := &abi.CompleteResult{}
			if len(values) > 100 {
				values, res.Completion.HasMore = values[:100], true
			}
			res.Completion.Values, res.Completion.Total = values, &total
			return res, nil
		},
	}
}

type textContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}
