package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/corral-mcp/corral/host/cluster"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/trust"
)

// publishTimeout bounds reaching NATS and storing the file.
const publishTimeout = 30 * time.Second

// clusterConfig loads the configuration that names the cluster
// (cluster.nats and the credentials), or says why it cannot.
func clusterConfig(e *env, file string) (*config.Config, bool) {
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		printErrors(e, err)
		return nil, false
	}
	if !cfg.Cluster.Enabled() {
		fmt.Fprintln(e.stderr, "corral: no cluster: set cluster.nats (in --config FILE, or CORRAL_CLUSTER_NATS)")
		return nil, false
	}
	return cfg, true
}

// clusterConn connects to the cluster's NATS, or says why it cannot.
func clusterConn(ctx context.Context, e *env, cfg *config.Config) (*cluster.Conn, bool) {
	c := cluster.NewConn(cluster.Options{Cluster: cfg.Cluster, Logger: slog.New(slog.DiscardHandler)})
	if err := c.Connect(); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return nil, false
	}
	if err := c.WaitConnected(ctx); err != nil {
		c.Stop(context.Background())
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return nil, false
	}
	return c, true
}

func runPublish(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin publish", "corral plugin publish [--config FILE] FILE.wasm",
		`Add a plugin to the cluster's plugin bucket (cluster.nats, cluster.name), or
replace the version there: every replica serving the bucket (cluster.plugins)
loads it. The object is named after the plugin's manifest name, which the file
is run in the sandbox to read. The signatures beside the file (FILE.wasm.minisig,
FILE.wasm.sigstore.json) are published with it, for replicas with a trust
policy (docs/distribution.md).`)
	cfgFile := fs.String("config", "", "configuration `FILE` naming the cluster (cluster.*)")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE.wasm")
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	cfg, ok := clusterConfig(e, *cfgFile)
	if !ok {
		return exitFail
	}
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	m, err := inspectWith(ctx, cfg, pos[0], data)
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %s: %v\n", pos[0], err)
		return exitFail
	}
	c, ok := clusterConn(ctx, e, cfg)
	if !ok {
		return exitFail
	}
	defer c.Stop(context.Background())
	// The signatures beside the file travel with it, first.
	sigs, err := trust.ReadSiblings(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	bySuffix := map[string][]byte{}
	if sigs.Minisig != nil {
		bySuffix[trust.MinisigSuffix] = sigs.Minisig
	}
	if sigs.Bundle != nil {
		bySuffix[trust.BundleSuffix] = sigs.Bundle
	}
	if err := c.PublishSignatures(ctx, m.Name, bySuffix); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	if err := c.Publish(ctx, m.Name, data); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "published %s %s (sha256 %s) to the cluster's plugin bucket\n", m.Name, m.Version, digestOf(data))
	if len(bySuffix) > 0 {
		fmt.Fprintf(e.stdout, "published its signatures beside it (%d)\n", len(bySuffix))
	}
	return exitOK
}

func runUnpublish(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin unpublish", "corral plugin unpublish [--config FILE] NAME",
		`Remove plugin NAME from the cluster's plugin bucket: every replica serving the
bucket stops serving it.`)
	cfgFile := fs.String("config", "", "configuration `FILE` naming the cluster (cluster.*)")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one plugin NAME")
	}
	cfg, ok := clusterConfig(e, *cfgFile)
	if !ok {
		return exitFail
	}
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	c, ok := clusterConn(ctx, e, cfg)
	if !ok {
		return exitFail
	}
	defer c.Stop(context.Background())
	if err := c.Unpublish(ctx, pos[0]); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err) // "…: not published" for a name the bucket lacks
		return exitFail
	}
	fmt.Fprintf(e.stdout, "unpublished %s from the cluster's plugin bucket\n", pos[0])
	return exitOK
}
