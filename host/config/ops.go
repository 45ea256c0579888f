package config

import (
	"crypto/tls"
	"os"
	"path/filepath"
)

// Audit configures the audit log.
type Audit struct {
	// File receives one JSON line per request (host/audit); "" is off.
	// SIGHUP reopens it, for rotation.
	File string `koanf:"file"`
}

// ServerTLS configures HTTPS on every HTTP listener (http.addr, ws.addr,
// admin.addr). Both files or neither; SIGHUP reads them again.
type ServerTLS struct {
	CertFile string `koanf:"certFile"` // PEM certificate chain, leaf first
	KeyFile  string `koanf:"keyFile"`  // PEM private key
}

// opsKeys are the schema keys of this file; opsPaths those that are paths.
var (
	opsKeys  = []string{"audit.file", "tls.certFile", "tls.keyFile"}
	opsPaths = opsKeys
)

func init() { schema = append(schema, opsKeys...) }

// validateOps checks the audit and TLS settings.
func validateOps(cfg *Config, bad func(key, format string, args ...any)) {
	if f := cfg.Audit.File; f != "" {
		if fi, err := os.Stat(filepath.Dir(f)); err != nil || !fi.IsDir() {
			bad("audit.file", "the folder of %s does not exist: create it, or point audit.file elsewhere", f)
		}
	}
	c, k := cfg.TLS.CertFile, cfg.TLS.KeyFile
	switch {
	case c == "" && k == "":
	case c == "":
		bad("tls.certFile", "tls.keyFile is set but not tls.certFile: set both (PEM files) or neither")
	case k == "":
		bad("tls.keyFile", "tls.certFile is set but not tls.keyFile: set both (PEM files) or neither")
	default:
		if _, err := tls.LoadX509KeyPair(c, k); err != nil {
			bad("tls.certFile", "cannot use %s with %s: %v (want a PEM certificate and its PEM private key)", c, k, err)
		}
	}
}
