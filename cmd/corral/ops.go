package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/corral-mcp/corral/host/audit"
	"github.com/corral-mcp/corral/host/config"
)

// auditPart is the audit log as a Part of the App: opened by newApp,
// reopened on SIGHUP, closed last.
type auditPart struct {
	log    *audit.Log
	logger *slog.Logger
}

func (p *auditPart) Name() string                    { return "audit log" }
func (p *auditPart) Start(ctx context.Context) error { return nil }
func (p *auditPart) Stop(ctx context.Context) error  { return p.log.Close() }

// record writes one request's record; a write that fails is logged, the
// request is not failed for it.
func (p *auditPart) record(r audit.Record) {
	if err := p.log.Write(r); err != nil {
		p.logger.Error("audit log write failed", "err", err)
	}
}

func (p *auditPart) hangup() {
	if err := p.log.Reopen(); err != nil {
		p.logger.Error("audit log not reopened; writing to the open file", "err", err)
		return
	}
	p.logger.Info("audit log reopened")
}

// openAudit opens the configured audit log as a Part and returns what
// mcp.Options.Audit takes, nil when there is none.
func (a *App) openAudit(cfg *config.Config) (func(audit.Record), error) {
	if cfg.Audit.File == "" {
		return nil, nil
	}
	l, err := audit.Open(cfg.Audit.File)
	if err != nil {
		return nil, err
	}
	p := &auditPart{log: l, logger: a.log}
	a.parts = append(a.parts, p)
	a.hangups = append(a.hangups, p.hangup)
	a.log.Info("audit log", "file", cfg.Audit.File)
	return p.record, nil
}

// certs holds the TLS certificate every HTTP listener serves; SIGHUP
// loads the files again.
type certs struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
	log               *slog.Logger
}

// loadTLS returns the listeners' TLS configuration, nil without
// tls.certFile.
func (a *App) loadTLS(cfg *config.Config) (*tls.Config, error) {
	if cfg.TLS.CertFile == "" {
		return nil, nil
	}
	c := &certs{certFile: cfg.TLS.CertFile, keyFile: cfg.TLS.KeyFile, log: a.log}
	if err := c.load(); err != nil {
		return nil, err
	}
	a.hangups = append(a.hangups, func() {
		if err := c.load(); err != nil {
			c.log.Error("TLS certificate not reloaded; serving the previous one", "err", err)
			return
		}
		c.log.Info("TLS certificate reloaded", "cert", c.certFile)
	})
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}, nil
}

func (c *certs) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	c.cur.Store(&cert)
	return nil
}

// hangup runs what SIGHUP does besides reloading the configuration:
// reopening the audit log, reloading the TLS certificate.
func (a *App) hangup() {
	for _, f := range a.hangups {
		f()
	}
}
