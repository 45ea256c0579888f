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
//
// A request that did not reach its replica whole (the connection was
// refused: a replica stopped, not yet seen by the checks; or writing the
// request failed) goes to the next replica instead: safe, because a replica
// reads a whole body before it acts on it. So does a request sent on a
// kept-alive connection that the replica closed before any byte of a
// response (a stopping replica closes its idle connections, and a request
// may be on its way down one at that moment); that one could also be a
// request whose replica died while serving it, and is then served twice,
// the price every balancer that retries on a reset connection pays. The
// body is read first for these retries (at most 8 MiB). A request whose
// response had begun is never sent again.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
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

// maxBody bounds a request body, which is held to be sent again.
const maxBody = 8 << 20

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
				if a, ok := r.Context().Value(failureKey{}).(*attempt); ok && (unreached(err) || a.reused && closedIdle(err)) {
					a.err = err // ServeHTTP sends it to the next replica
					return
				}
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

// failureKey holds, in a request's context, its *attempt.
type failureKey struct{}

// attempt is one try of a request on a replica.
type attempt struct {
	reused bool  // sent on a kept-alive connection
	err    error // set by ErrorHandler when the request may go to the next replica
}

// unreached reports whether err means the request never reached the
// replica whole: the connection could not be made, or writing the request
// on it failed.
func unreached(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) {
		return false
	}
	switch op.Op {
	case "dial", "write", "readfrom":
		return true
	}
	return false
}

// closedIdle reports whether err is a kept-alive connection closed by
// the replica with no response: end of file, or a reset.
func closedIdle(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
			http.Error(w, "corral-rr: request body: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
	}
	for range p.backends {
		b := p.pick()
		a := &attempt{}
		ctx := httptrace.WithClientTrace(context.WithValue(r.Context(), failureKey{}, a),
			&httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { a.reused = ci.Reused }})
		req := r.Clone(ctx)
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			req.ContentLength = int64(len(body))
		}
		b.proxy.ServeHTTP(w, req)
		if a.err == nil {
			return
		}
		var op *net.OpError
		if errors.As(a.err, &op) && op.Op == "dial" {
			b.down.Store(true) // until its next check says otherwise
		}
		slog.Warn("corral-rr: request did not reach the replica; next one", "replica", b.url.String(), "err", a.err)
	}
	w.WriteHeader(http.StatusBadGateway)
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
