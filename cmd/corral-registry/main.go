// Command corral-registry serves an in-memory OCI registry on a loopback
// address for the end-to-end tests of plugin distribution
// (interop/supplychain_test.go): go-containerregistry's registry with the
// OCI 1.1 referrers API. It prints its host:port on stdout and serves
// until it is killed. It is a test fixture, not a registry to deploy.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback `host:port` to listen on")
	flag.Parse()
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintln(os.Stderr, "corral-registry: -addr must be a loopback host:port")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral-registry:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	h := registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{Handler: h}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "corral-registry:", err)
		os.Exit(1)
	}
}
