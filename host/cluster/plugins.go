package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
	"github.com/corral-mcp/corral/host/trust"
)

// The cluster's plugin bucket: a JetStream Object Store holding one object
// per plugin, "<plugin name>.wasm", that every replica in bucket mode
// (cluster.plugins) serves. A replica mirrors it into a directory of its
// own and host/registry serves that directory exactly as a plugin
// directory: the same settling, binding and claim rules, compile off the
// request path, atomic swap, last good version kept; replicas given the
// same objects compute the same set generation.

// pluginName is the manifest name syntax (abi.Manifest.Name).
var pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// objectName is plugin name's object in the bucket.
func objectName(name string) string { return name + ".wasm" }

// signatureSuffixes name the signature objects beside a plugin's
// ("<name>.wasm.minisig", "<name>.wasm.sigstore.json"), mirrored beside its
// file where host/registry's trust check reads them.
var signatureSuffixes = []string{trust.MinisigSuffix, trust.BundleSuffix}

// pluginBucket opens (creating it if needed) the cluster's plugin bucket.
func (c *Conn) pluginBucket(ctx context.Context) (jetstream.ObjectStore, error) {
	if c.nc == nil || !c.nc.IsConnected() {
		return nil, ErrUnavailable
	}
	name := c.opts.Cluster.Name + "-plugins"
	store, err := c.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: name, Description: "corral plugins: one object per plugin, <name>.wasm", Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: plugin bucket %s: %w", name, err)
	}
	return store, nil
}

// WaitConnected waits until the connection is made or ctx is done.
func (c *Conn) WaitConnected(ctx context.Context) error {
	for !c.Status().Connected {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: NATS %s not reachable: %w", strings.Join(c.opts.Cluster.NATS, ","), context.Cause(ctx))
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Publish adds plugin name's file (data) to the cluster's plugin bucket,
// or replaces it; every replica in bucket mode then loads it.
func (c *Conn) Publish(ctx context.Context, name string, data []byte) error {
	if !pluginName.MatchString(name) {
		return fmt.Errorf("cluster: publish: %q is not a plugin name", name)
	}
	b, err := c.pluginBucket(ctx)
	if err != nil {
		return err
	}
	if _, err := b.PutBytes(ctx, objectName(name), data); err != nil {
		return fmt.Errorf("cluster: publish %s: %w", name, err)
	}
	return nil
}

// PublishSignatures sets the signatures of plugin name in the bucket, by
// suffix (trust.MinisigSuffix, trust.BundleSuffix): a suffix absent from
// sigs removes that signature. Publish them before the module, so that a
// replica loads the new module with its signature.
func (c *Conn) PublishSignatures(ctx context.Context, name string, sigs map[string][]byte) error {
	if !pluginName.MatchString(name) {
		return fmt.Errorf("cluster: publish: %q is not a plugin name", name)
	}
	b, err := c.pluginBucket(ctx)
	if err != nil {
		return err
	}
	for _, suffix := range signatureSuffixes {
		obj := objectName(name) + suffix
		if sig, ok := sigs[suffix]; ok {
			if _, err := b.PutBytes(ctx, obj, sig); err != nil {
				return fmt.Errorf("cluster: publish %s: %w", obj, err)
			}
			continue
		}
		if err := b.Delete(ctx, obj); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("cluster: publish %s: %w", obj, err)
		}
	}
	return nil
}

// ErrNotPublished: Unpublish of a plugin the bucket does not hold.
var ErrNotPublished = errors.New("not published")

// Unpublish removes plugin name from the cluster's plugin bucket; every
// replica in bucket mode then stops serving it.
func (c *Conn) Unpublish(ctx context.Context, name string) error {
	if !pluginName.MatchString(name) {
		return fmt.Errorf("cluster: unpublish: %q is not a plugin name", name)
	}
	b, err := c.pluginBucket(ctx)
	if err != nil {
		return err
	}
	if _, err := b.GetInfo(ctx, objectName(name)); errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("cluster: unpublish %s: %w", name, ErrNotPublished)
	}
	if err := b.Delete(ctx, objectName(name)); err != nil {
		return fmt.Errorf("cluster: unpublish %s: %w", name, err)
	}
	for _, suffix := range signatureSuffixes {
		if err := b.Delete(ctx, objectName(name)+suffix); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("cluster: unpublish %s: %w", name, err)
		}
	}
	return nil
}

// Mirror keeps a directory equal to the cluster's plugin bucket: each
// object written there (to a temporary name, then renamed, so the watcher
// never sees half a file), each deletion removed. It is a Part of the
// App, started before the registry loads the directory.
type Mirror struct {
	c   *Conn
	dir string
	log *slog.Logger

	stop   context.CancelFunc
	done   chan struct{}
	synced chan struct{} // closed after the first full sync
	once   sync.Once
}

// NewMirror returns the mirror of c's plugin bucket into dir, which it
// owns: files there that are not in the bucket are removed.
func NewMirror(c *Conn, dir string) *Mirror {
	return &Mirror{c: c, dir: dir, log: c.log, synced: make(chan struct{})}
}

// Name implements the App's Part.
func (m *Mirror) Name() string { return "cluster plugins" }

// Start starts mirroring and waits, for at most the Conn's timeout, until
// the directory holds what the bucket held: then the registry's first
// load serves the cluster's plugins. With NATS away it returns at once;
// the plugins arrive, hot-loaded, when NATS is back.
func (m *Mirror) Start(ctx context.Context) error {
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.stop, m.done = stop, make(chan struct{})
	go m.run(run)
	if !m.c.nc.IsConnected() {
		return nil
	}
	select {
	case <-m.synced:
	case <-time.After(m.c.opts.Timeout):
		m.log.Warn("cluster: the plugin bucket is not mirrored yet; its plugins load when it is", "dir", m.dir)
	case <-ctx.Done():
	}
	return nil
}

// Stop implements the App's Part.
func (m *Mirror) Stop(context.Context) error {
	if m.stop != nil {
		m.stop()
		<-m.done
	}
	return nil
}

// Synced is closed once the directory has first matched the bucket.
func (m *Mirror) Synced() <-chan struct{} { return m.synced }

// run watches the bucket until ctx is done, watching again after every
// reconnection and, after a pause, every failure (NATS away, the bucket
// not there yet).
func (m *Mirror) run(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		reconnected := m.c.nextConnect()
		err := m.watch(ctx, reconnected)
		if err == nil {
			continue
		}
		if ctx.Err() == nil {
			m.log.Debug("cluster: plugin bucket watch", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-reconnected:
		case <-time.After(m.c.opts.ReconnectWait):
		}
	}
}

// watch applies the bucket's objects and then its changes to the
// directory, until the watch ends or NATS reconnects.
func (m *Mirror) watch(ctx context.Context, reconnected <-chan struct{}) error {
	bctx, cancel := context.WithTimeout(ctx, m.c.opts.Timeout)
	b, err := m.c.pluginBucket(bctx)
	cancel()
	if err != nil {
		return err
	}
	w, err := b.Watch(ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch the plugin bucket: %w", err)
	}
	defer w.Stop()
	seen := map[string]bool{}
	initial := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-reconnected:
			return nil // watch again: the server may have lost the watch
		case info, ok := <-w.Updates():
			if !ok {
				return errors.New("cluster: plugin bucket watch ended")
			}
			if info == nil { // the objects there were at the start are applied
				if initial {
					m.prune(seen)
					initial = false
					m.once.Do(func() { close(m.synced) })
				}
				continue
			}
			if initial && !info.Deleted {
				seen[info.Name] = true
			}
			if err := m.apply(ctx, b, info); err != nil {
				m.log.Warn("cluster: plugin bucket", "object", info.Name, "err", err)
			}
		}
	}
}

// fileName is the mirror's file for object name, or "" for a name that
// is not one (the bucket holds only "<plugin>.wasm" and its signatures).
func fileName(object string) string {
	base := object
	for _, suffix := range signatureSuffixes {
		base = strings.TrimSuffix(base, suffix)
	}
	n, ok := strings.CutSuffix(base, ".wasm")
	if !ok || !pluginName.MatchString(n) {
		return ""
	}
	return object
}

// apply writes or removes one object's file.
func (m *Mirror) apply(ctx context.Context, b jetstream.ObjectStore, info *jetstream.ObjectInfo) error {
	f := fileName(info.Name)
	if f == "" {
		return errors.New("not a plugin object (<name>.wasm, or its .minisig or .sigstore.json); ignored")
	}
	path := filepath.Join(m.dir, f)
	if info.Deleted {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		m.log.Info("cluster: plugin unpublished", "object", info.Name)
		return nil
	}
	if cur, err := os.ReadFile(path); err == nil && digest(cur) == info.Digest {
		return nil // already there
	}
	data, err := b.GetBytes(ctx, info.Name)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return err
	}
	m.log.Info("cluster: plugin published", "object", info.Name, "bytes", len(data))
	return nil
}

// prune removes the files the bucket does not hold.
func (m *Mirror) prune(keep map[string]bool) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		m.log.Warn("cluster: plugin mirror", "err", err)
		return
	}
	for _, e := range entries {
		if !keep[e.Name()] {
			_ = os.Remove(filepath.Join(m.dir, e.Name()))
		}
	}
}

// digest is an Object Store digest: "SHA-256=" and the base64url SHA-256.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}
