package plugin

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// capSet is what a plugin may use: a field is nil (or false) unless the
// manifest requested the capability and the operator granted it.
type capSet struct {
	log        *tokenBucket
	logDropped atomic.Int64

	notify        bool
	notifyRate    *tokenBucket
	notifyDropped atomic.Int64

	kv    *sharedStore
	kvMax int

	files *fileRoots
	http  *fetcher

	config map[string]string

	granted []string
	release func() error
}

func (c *capSet) names() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.granted)
}

func (c *capSet) close() error {
	if c == nil || c.release == nil {
		return nil
	}
	return c.release()
}

// newCapSet links the capabilities p's manifest requests and its config
// grants.
func (r *Runtime) newCapSet(p *Plugin) (*capSet, error) {
	c := &capSet{}
	g := p.cfg.Grants
	l := p.cfg.Limits
	var closers []func() error
	for _, name := range p.manifest.Capabilities {
		switch name {
		case abi.CapLog:
			if !g.Log {
				continue
			}
			c.log = newTokenBucket(l.LogRate, l.LogBurst)
		case abi.CapNotify:
			if !g.Notify {
				continue
			}
			c.notify = true
			c.notifyRate = newTokenBucket(l.NotifyRate, l.NotifyBurst)
		case abi.CapKV:
			if !g.KV {
				continue
			}
			s, err := r.openStore(p.name, l.KVQuotaBytes)
			if err != nil {
				return nil, err
			}
			c.kv = s
			c.kvMax = l.KVMaxValueBytes
			closers = append(closers, func() error { return r.releaseStore(s) })
		case abi.CapFiles:
			if len(g.Files) == 0 {
				continue
			}
			fr, err := newFileRoots(g.Files, l.FileMaxBytes, l.FileMaxEntries)
			if err != nil {
				return nil, err
			}
			c.files = fr
			closers = append(closers, fr.close)
		case abi.CapHTTP:
			if len(g.HTTPHosts) == 0 {
				continue
			}
			c.http = newFetcher(g.HTTPHosts, g.AllowPrivate, l)
			closers = append(closers, func() error { c.http.close(); return nil })
		case abi.CapConfig:
			if len(g.Config) == 0 {
				continue
			}
			c.config = make(map[string]string, len(g.Config))
			for k, v := range g.Config {
				c.config[k] = v
			}
		default:
			continue
		}
		c.granted = append(c.granted, name)
	}
	c.release = func() error {
		var errs []error
		for _, f := range closers {
			errs = append(errs, f())
		}
		return errors.Join(errs...)
	}
	return c, nil
}

// ownsURI reports whether uri's scheme is one the plugin claims.
func (p *Plugin) ownsURI(uri string) bool {
	i := strings.IndexByte(uri, ':')
	if i <= 0 {
		return false
	}
	return slices.Contains(p.manifest.Schemes, strings.ToLower(uri[:i]))
}

// tokenBucket is a simple rate limiter: rate tokens per second up to
// burst.
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate float64, burst int) *tokenBucket {
	return &tokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

func (b *tokenBucket) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
