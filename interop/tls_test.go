package interop

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial
// number serial, and its key, as PEM files; it returns them as a pool the
// client trusts.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "corral test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// TestTLS serves the conformance fixtures over HTTPS (tls.certFile and
// tls.keyFile) with a certificate the test generates, and judges both eras
// with the official Go SDK client trusting only that certificate; plain
// HTTP is refused on the port; after the files are replaced and SIGHUP
// sent, new connections get the new certificate without a restart.
func TestTLS(t *testing.T) {
	if why := missingBuild(corralBin, conformanceWasm); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := writeCert(t, certFile, keyFile, 1)
	cfg := filepath.Join(dir, "corral.yaml")
	if err := os.WriteFile(cfg, []byte("tls:\n  certFile: cert.pem\n  keyFile: key.pem\nplugin:\n  conformance:\n    grants:\n      log: true\n      notify: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logs := &lockedBuffer{}
	cmd := exec.Command(corralBin, "serve", "--config", cfg, "--plugins", pluginDir(t), "--http", addr)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", tail(logs.String(), 4000))
		}
	})

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + addr
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := client.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("https /readyz not 200 within %v (last: %v)", readyTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The line for a person follows readiness by a moment.
	for line := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "https://"+addr+"/mcp"); {
		if time.Now().After(line) {
			t.Errorf("the connect line does not say https://%s/mcp:\n%s", addr, tail(logs.String(), 2000))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client, MaxRetries: -1}, era)
			runChecks(t, s, era)
		})
	}

	t.Run("plain HTTP refused", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("plain HTTP answered 200 on the HTTPS port")
			}
		}
	})

	t.Run("SIGHUP reloads the certificate", func(t *testing.T) {
		pool2 := writeCert(t, certFile, keyFile, 2)
		before := strings.Count(logs.String(), "TLS certificate reloaded")
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(logs.String(), "TLS certificate reloaded") == before {
			if time.Now().After(deadline) {
				t.Fatal("no 'TLS certificate reloaded' within 10s of SIGHUP")
			}
			time.Sleep(20 * time.Millisecond)
		}
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool2})
		if err != nil {
			t.Fatalf("new connection with the new certificate: %v", err)
		}
		defer conn.Close()
		if got := conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); got != 2 {
			t.Errorf("serving certificate serial %d after SIGHUP, want 2", got)
		}
	})
}
