package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/plugin"
)

// errCodeStoreFailed is the JetStream API error a put gets when the
// stream would go over its MaxBytes ("maximum bytes exceeded"): the only
// limit a kv bucket has.
const errCodeStoreFailed jetstream.ErrorCode = 10077

// ErrUnavailable is the error of a kv operation while NATS is away.
var ErrUnavailable = errors.New("cluster: NATS unavailable")

// OpenStore is host/plugin's RuntimeConfig.OpenStore on JetStream KV: the
// store of plugin is the bucket "<cluster.name>-kv-<plugin>", shared by
// every replica, whose MaxBytes is the plugin's quota, enforced by the
// server across replicas. The bucket is made on first use, so a plugin
// loads, and its kv calls fail fast (and succeed again later), while NATS
// is away.
func (c *Conn) OpenStore(plugin string, quota int64) (plugin.Store, error) {
	return &kvStore{c: c, bucket: c.opts.Cluster.Name + "-kv-" + plugin, quota: quota}, nil
}

// kvStore is one plugin's Store in its bucket. Keys are base64url-encoded
// (a plugin's key is any bytes; a NATS key is a subject token); History 1
// keeps one value per key, and a delete purges the key's messages, leaving
// no tombstone behind to count against the quota.
type kvStore struct {
	c      *Conn
	bucket string
	quota  int64

	mu     sync.Mutex
	kv     jetstream.KeyValue // nil until made
	stream jetstream.Stream
}

func (s *kvStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.c.opts.Timeout)
}

// bind makes (or updates to the quota) and opens the bucket, once; while
// NATS is away it fails at once.
func (s *kvStore) bind(ctx context.Context) (jetstream.KeyValue, jetstream.Stream, error) {
	if s.c.nc == nil || !s.c.nc.IsConnected() {
		return nil, nil, ErrUnavailable // at once, not after a timeout
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kv != nil {
		return s.kv, s.stream, nil
	}
	kv, err := s.c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: s.bucket, History: 1, MaxBytes: s.quota, Storage: jetstream.FileStorage,
		Description: "corral kv store of one plugin",
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: kv bucket %s: %w", s.bucket, err)
	}
	st, err := s.c.js.Stream(ctx, "KV_"+s.bucket)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: kv bucket %s: %w", s.bucket, err)
	}
	s.kv, s.stream = kv, st
	return kv, st, nil
}

func encodeKey(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// Get implements plugin.Store.
func (s *kvStore) Get(key string) ([]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	kv, _, err := s.bind(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, encodeKey(key))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, plugin.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("cluster: kv get: %w", err)
	}
	return e.Value(), nil
}

// Set implements plugin.Store. Corral refuses, without asking the server,
// an entry whose key and value alone exceed the quota (as the local store
// does) and a message over the server's payload limit; the server refuses
// a put that would take the bucket over its MaxBytes.
func (s *kvStore) Set(key string, value []byte) error {
	if int64(len(key)+len(value)) > s.quota {
		return plugin.ErrQuota
	}
	ctx, cancel := s.ctx()
	defer cancel()
	kv, _, err := s.bind(ctx)
	if err != nil {
		return err
	}
	ek := encodeKey(key)
	// The message is the subject ("$KV.<bucket>.<key>") and the value.
	if n := len("$KV.") + len(s.bucket) + 1 + len(ek) + len(value); int64(n) > s.c.nc.MaxPayload() {
		return plugin.ErrTooLarge
	}
	if _, err := kv.Put(ctx, ek, value); err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeStoreFailed {
			return plugin.ErrQuota
		}
		return fmt.Errorf("cluster: kv set: %w", err)
	}
	return nil
}

// Delete implements plugin.Store: the key's messages are purged.
func (s *kvStore) Delete(key string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, st, err := s.bind(ctx)
	if err != nil {
		return err
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+s.bucket+"."+encodeKey(key))); err != nil {
		return fmt.Errorf("cluster: kv delete: %w", err)
	}
	return nil
}

// Close implements plugin.Store; the connection is the Conn's.
func (s *kvStore) Close() error { return nil }

var _ plugin.Store = (*kvStore)(nil)
