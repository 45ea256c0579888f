package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/corral-mcp/corral/host/config"
)

// Options configure a Conn.
type Options struct {
	// Cluster is the validated cluster configuration.
	Cluster config.Cluster
	// Logger receives connection changes; nil discards them.
	Logger *slog.Logger
	// ReconnectWait is the pause between attempts to reach NATS (default
	// 1s, with jitter).
	ReconnectWait time.Duration
	// Timeout bounds one request to NATS: a kv operation, a bucket
	// lookup (default 2s).
	Timeout time.Duration
	// OnConnect is called each time the connection is made: first, and
	// again after every outage (the App resyncs its listeners: events may
	// have been lost meanwhile). Nil: nothing.
	OnConnect func()
}

// Conn is a replica's connection to NATS. It is made in the background
// and made again after every outage, forever: NATS being down degrades
// the replica, never stops it. It is a Part of the App (Stop closes it).
type Conn struct {
	opts Options
	log  *slog.Logger
	nc   *nats.Conn
	js   jetstream.JetStream

	mu     sync.Mutex
	up     bool
	since  time.Time // of the last change between up and down
	lastEr string
	ups    chan struct{} // closed, and replaced, at each connect

	reconnects atomic.Int64
}

// Status is a Conn's state, for the operator status.
type Status struct {
	Name    string `json:"name"`
	Replica string `json:"replica"`
	// Connected says whether NATS is reachable now; while it is not, the
	// replica serves alone (no cross-replica events, no shared kv).
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since,omitzero"`
	Server    string    `json:"server,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	// Reconnects counts the times the connection came back.
	Reconnects int64 `json:"reconnects"`
}

// NewConn returns a Conn that Connect connects: what OnConnect calls can
// be built in between.
func NewConn(opts Options) *Conn {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReconnectWait <= 0 {
		opts.ReconnectWait = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	return &Conn{opts: opts, log: opts.Logger, ups: make(chan struct{})}
}

// nextConnect returns a channel closed when the connection is next made
// (first, or again after an outage): what lives on the server (a watch's
// consumer) may have to be made again.
func (c *Conn) nextConnect() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ups
}

// Connect connects to NATS. An unreachable server is not an error: it
// returns at once, the replica serves, and the connection is made when
// NATS is back. Only a configuration NATS refuses to use (an unreadable
// credentials or TLS file) is an error.
func (c *Conn) Connect() error {
	cl := c.opts.Cluster
	nopts := []nats.Option{
		nats.Name("corral " + cl.Name + "/" + cl.Replica),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(c.opts.ReconnectWait),
		// Fire and forget, no replay: what is published while NATS is
		// away is dropped, not buffered for later.
		nats.ReconnectBufSize(-1),
		nats.ConnectHandler(func(nc *nats.Conn) { c.changed(true, nc, nil) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { c.reconnects.Add(1); c.changed(true, nc, nil) }),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) { c.changed(false, nc, err) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.log.Warn("cluster: nats error", "err", err)
		}),
	}
	switch {
	case cl.CredsFile != "":
		nopts = append(nopts, nats.UserCredentials(cl.CredsFile))
	case cl.User != "":
		nopts = append(nopts, nats.UserInfo(cl.User, cl.Password))
	case cl.Token != "":
		nopts = append(nopts, nats.Token(cl.Token))
	}
	if cl.TLS.CA != "" {
		nopts = append(nopts, nats.RootCAs(cl.TLS.CA))
	}
	if cl.TLS.Cert != "" {
		nopts = append(nopts, nats.ClientCert(cl.TLS.Cert, cl.TLS.Key))
	}
	if cl.TLS != (config.TLS{}) {
		nopts = append(nopts, nats.Secure())
	}
	nc, err := nats.Connect(strings.Join(cl.NATS, ","), nopts...)
	if err != nil {
		return fmt.Errorf("cluster: nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("cluster: jetstream: %w", err)
	}
	c.nc, c.js = nc, js
	if !nc.IsConnected() {
		c.log.Warn("cluster: NATS unreachable; serving alone until it is back", "servers", cl.NATS)
	}
	return nil
}

// Name implements the App's Part.
func (c *Conn) Name() string { return "cluster" }

// Start implements the App's Part. The connection is made by Connect, so
// that what is built on it (the bus, the stores) has it while the App is
// provisioned; there is nothing more to start.
func (c *Conn) Start(context.Context) error { return nil }

// NATS returns the connection (after Connect), for the parts built on it.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// JetStream returns the connection's JetStream context.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// changed records a transition; coming up calls OnConnect.
func (c *Conn) changed(up bool, nc *nats.Conn, err error) {
	if up && c.opts.OnConnect != nil {
		// Before the state says connected: whoever sees it connected
		// sees the resync done.
		c.opts.OnConnect()
	}
	c.mu.Lock()
	was := c.up
	c.up, c.since = up, time.Now()
	if err != nil {
		c.lastEr = err.Error()
	}
	if up {
		close(c.ups)
		c.ups = make(chan struct{})
	}
	c.mu.Unlock()
	switch {
	case up && !was:
		c.log.Info("cluster: connected to NATS", "server", nc.ConnectedUrlRedacted(), "replica", c.opts.Cluster.Replica)
	case !up && was:
		c.log.Warn("cluster: lost NATS; cross-replica events and shared kv are unavailable until it is back", "err", err)
	}
}

// Stop implements the App's Part: it flushes what is pending and closes
// the connection.
func (c *Conn) Stop(ctx context.Context) error {
	if c.nc == nil {
		return nil
	}
	if c.nc.IsConnected() {
		_ = c.nc.FlushWithContext(ctx)
	}
	c.nc.Close()
	return nil
}

// Status returns the connection's state.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Name: c.opts.Cluster.Name, Replica: c.opts.Cluster.Replica, Connected: c.up, Since: c.since,
		LastError: c.lastEr, Reconnects: c.reconnects.Load()}
	if c.up && c.nc != nil {
		st.Server = c.nc.ConnectedUrlRedacted()
	}
	return st
}

// subject is the cluster's subject for what.
func (c *Conn) subject(what string) string { return c.opts.Cluster.Name + "." + what }
