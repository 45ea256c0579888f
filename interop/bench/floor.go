package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// serveFloor is the HTTP floor: a bare net/http handler that reads the
// request body and answers the bytes recorded in file (a JSON object of
// method -> response body) for the request's Mcp-Method header. No JSON
// is parsed per request; nothing is faster over the same HTTP stack.
func serveFloor(addr, file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	var bodies map[string]string
	if err := json.Unmarshal(raw, &bodies); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	resp := map[string][]byte{}
	for m, b := range bodies {
		resp[m] = []byte(b)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		b, ok := resp[r.Header.Get("Mcp-Method")]
		if !ok {
			http.Error(w, "unknown method", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	return listenAndServe(addr, h)
}

// listenAndServe serves h at /mcp on addr, printing "listening ADDR",
// until stdin closes.
func listenAndServe(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening %s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
