// Package ocitest runs a real OCI registry in-process for tests:
// go-containerregistry's registry with the referrers API, on a loopback
// listener, with optional basic authentication, a switch that takes it
// down, and a way to serve tampered blob bytes.
package ocitest

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Registry is a registry serving on 127.0.0.1 until the test ends.
type Registry struct {
	// Host is host:port, as a reference names the registry.
	Host string
	down atomic.Bool
	mu   sync.Mutex
	bad  map[string]bool // blob digests served with a flipped byte
}

// Options configure a Registry.
type Options struct {
	// Username and Password, when set, are required (basic
	// authentication) on every request.
	Username, Password string
	// NoReferrers turns the referrers API off, as on registries that
	// predate OCI 1.1: clients fall back to the referrers tag schema.
	NoReferrers bool
}

// New starts a registry.
func New(t testing.TB, o Options) *Registry {
	t.Helper()
	r := &Registry{bad: map[string]bool{}}
	blobs := &tamperable{BlobHandler: registry.NewInMemoryBlobHandler(), r: r}
	h := registry.New(registry.WithReferrersSupport(!o.NoReferrers), registry.WithBlobHandler(blobs), registry.Logger(discard()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.down.Load() {
			http.Error(w, "registry down", http.StatusServiceUnavailable)
			return
		}
		if o.Username != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != o.Username || p != o.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, req)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r.Host = ln.Addr().String()
	return r
}

// Down makes every request fail (503) while down is true: the registry
// is unreachable for the server under test.
func (r *Registry) Down(down bool) { r.down.Store(down) }

// Tamper makes the registry serve the blob with digest ("sha256:…") with
// one byte flipped, as a compromised registry or mirror would.
func (r *Registry) Tamper(digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bad[digest] = true
}

func (r *Registry) tampered(h v1.Hash) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad[h.String()]
}

// tamperable is the in-memory blob store, serving tampered blobs flipped.
type tamperable struct {
	registry.BlobHandler
	r *Registry
}

func (b *tamperable) Get(ctx context.Context, repo string, h v1.Hash) (io.ReadCloser, error) {
	rc, err := b.BlobHandler.Get(ctx, repo, h)
	if err != nil || !b.r.tampered(h) {
		return rc, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	data = bytes.Clone(data)
	data[len(data)/2] ^= 0xff
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (b *tamperable) Stat(ctx context.Context, repo string, h v1.Hash) (int64, error) {
	return b.BlobHandler.(registry.BlobStatHandler).Stat(ctx, repo, h)
}

func (b *tamperable) Put(ctx context.Context, repo string, h v1.Hash, rc io.ReadCloser) error {
	return b.BlobHandler.(registry.BlobPutHandler).Put(ctx, repo, h, rc)
}

func (b *tamperable) Delete(ctx context.Context, repo string, h v1.Hash) error {
	return b.BlobHandler.(registry.BlobDeleteHandler).Delete(ctx, repo, h)
}

func discard() *log.Logger { return log.New(io.Discard, "", 0) }
