// Command corral-rr is a round-robin reverse proxy for trying corral
// replicas on one machine and for the cluster tests (make test-cluster):
// each HTTP request goes to the next replica in turn, whatever it is (a
// POST, a long-lived GET stream or subscriptions/listen, a DELETE), with
// no stickiness, streaming responses as they come. It sets
// X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto, so a replica
// that trusts it (http.trustedProxies) counts the client's address, and
// names the replica that served each response in the header
// Corral-Rr-Backend (its index in the list, from 0).
//
//	corral-rr -listen 127.0.0.1:7300 http://127.0.0.1:7301 http://127.0.0.1:7302 http://127.0.0.1:7303
//
// With -check PATH (default /readyz) it asks each replica for PATH every
// -every (default 500ms) and leaves out of the rotation, until it answers
// 200 again, a replica that does not; when none does, it sends to the
// next one anyway. -check "" turns the checks off.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// backendHeader names the replica that served a response.
const backendHeader = "Corral-Rr-Backend"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "corral-rr:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("corral-rr", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:7300", "address to listen on")
	check := fs.String("check", "/readyz", "path each replica must answer 200 on to stay in the rotation (\"\": no checks)")
	every := fs.Duration("every", 500*time.Millisecond, "interval of the checks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: corral-rr [-listen ADDR] [-check PATH] REPLICA_URL [REPLICA_URL]")
	}
	p, err := newProxy(fs.Args())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *check != "" {
		go p.checks(ctx, *check, *every)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	slog.Info("corral-rr listening", "addr", ln.Addr().String(), "replicas", len(p.backends))
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// backend is one replica.
type backend struct {
	url   *url.URL
	proxy *httputil.ReverseProxy
	down  atomic.Bool // its last check failed
}

// proxy sends each request to the next backend.
type proxy struct {
	backends []*backend
	next     atomic.Uint64
}

func newProxy(urls []string) (*proxy, error) {
	p := &proxy{}
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("replica %q: want an http:// or https:// URL", raw)
		}
		b := &backend{url: u}
		index := strconv.Itoa(i)
		b.proxy = &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(u)
				r.SetXForwarded()
			},
			FlushInterval: -1, // event streams: every write goes out at once
			ModifyResponse: func(resp *http.Response) error {
				resp.Header.Set(backendHeader, index)
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if !errors.Is(err, context.Canceled) {
					slog.Warn("corral-rr: replica failed", "replica", u.String(), "err", err)
				}
				w.Header().Set(backendHeader, index)
				w.WriteHeader(http.StatusBadGateway)
			},
		}
		p.backends = append(p.backends, b)
	}
	return p, nil
}

// pick returns the next backend in turn that is up, or the next one when
// none is.
func (p *proxy) pick() *backend {
	n := uint64(len(p.backends))
	start := p.next.Add(1) - 1
	for i := range n {
		if b := p.backends[(start+i)%n]; !b.down.Load() {
			if i > 0 {
				p.next.Add(i) // the turn moves past the ones skipped
			}
			return b
		}
	}
	return p.backends[start%n]
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.pick().proxy.ServeHTTP(w, r)
}

// checks asks every backend for path every interval until ctx is done.
func (p *proxy) checks(ctx context.Context, path string, every time.Duration) {
	client := &http.Client{Timeout: every}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, b := range p.backends {
			ok := false
			if resp, err := client.Get(b.url.JoinPath(path).String()); err == nil {
				resp.Body.Close()
				ok = resp.StatusCode == http.StatusOK
			}
			if was := !b.down.Swap(!ok); was != ok {
				slog.Info("corral-rr: replica", "replica", b.url.String(), "up", ok)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
