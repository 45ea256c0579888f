package cluster

import (
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/corral-mcp/corral/host/config"
)

// testServer is a real NATS server with JetStream, in this process, that
// a test can stop and start again on the same port and store.
type testServer struct {
	t          testing.TB
	port       int
	dir        string
	maxPayload int32 // 0: the server's default (1 MiB)
	s          *server.Server
}

// startServer starts a server on a free port with a fresh store directory.
func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerWith(t, 0)
}

// startServerWith starts a server whose max_payload is maxPayload bytes.
func startServerWith(t testing.TB, maxPayload int32) *testServer {
	t.Helper()
	n := &testServer{t: t, port: -1, dir: t.TempDir(), maxPayload: maxPayload}
	n.start()
	n.port = n.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *testServer) start() {
	n.t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir,
		NoLog: true, NoSigs: true, MaxPayload: n.maxPayload,
	})
	if err != nil {
		n.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats server not ready")
	}
	n.s = s
}

func (n *testServer) stop() {
	if n.s != nil {
		n.s.Shutdown()
		n.s.WaitForShutdown()
		n.s = nil
	}
}

// restart stops the server and starts it again, same port, same store.
func (n *testServer) restart() {
	n.stop()
	n.start()
}

func (n *testServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// startConn starts a Conn of replica to the server at url.
func startConn(t testing.TB, url, replica string) *Conn {
	t.Helper()
	c := NewConn(Options{
		Cluster:       clusterOf(url, replica),
		ReconnectWait: 20 * time.Millisecond, Timeout: time.Second,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := c.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(t.Context()) })
	return c
}

// clusterOf is the configuration of replica of the cluster "test" on url.
func clusterOf(url, replica string) config.Cluster {
	return config.Cluster{NATS: []string{url}, Name: "test", Replica: replica}
}
