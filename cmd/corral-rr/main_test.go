package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRoundRobin: requests go to the replicas in turn, streams included,
// with the forwarding headers set, and a replica marked down is skipped.
func TestRoundRobin(t *testing.T) {
	var hits [3]atomic.Int64
	release := make(chan struct{})
	var urls []string
	for i := range 3 {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			if r.Header.Get("X-Forwarded-For") == "" || r.Header.Get("X-Forwarded-Host") == "" {
				t.Errorf("replica %d: no forwarding headers: %v", i, r.Header)
			}
			if r.URL.Path == "/stream" {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: first\n\n")
				w.(http.Flusher).Flush()
				<-release
				return
			}
			fmt.Fprint(w, i)
		}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	p, err := newProxy(urls)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	get := func(path string) (string, string) {
		t.Helper()
		resp, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.Header.Get(backendHeader)
	}
	var order []string
	for range 6 {
		body, backend := get("/mcp")
		if body != backend {
			t.Errorf("replica %s answered, header says %s", body, backend)
		}
		order = append(order, body)
	}
	if got := strings.Join(order, ""); got != "012012" {
		t.Errorf("order %s, want 012012", got)
	}

	// A stream's first event arrives while the replica still holds it.
	resp, err := http.Get(front.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Errorf("stream: %q, %v", line, err)
	}
	if body, _ := get("/mcp"); body != "1" {
		t.Errorf("after the stream on 0, replica %s answered; want 1", body)
	}
	close(release)
	resp.Body.Close()

	p.backends[2].down.Store(true)
	for _, want := range []string{"0", "1", "0"} { // 2 is next, but down
		if body, _ := get("/mcp"); body != want {
			t.Errorf("with 2 down: replica %s, want %s", body, want)
		}
	}
}

// TestChecks: a replica failing its check leaves the rotation and comes
// back when it answers again.
func TestChecks(t *testing.T) {
	var healthy atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(ts.Close)
	p, err := newProxy([]string{ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	go p.checks(ctx, "/readyz", 5*time.Millisecond)
	wait := func(down bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for p.backends[0].down.Load() != down {
			if time.Now().After(deadline) {
				t.Fatalf("down never became %v", down)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait(true)
	healthy.Store(true)
	wait(false)
}

func TestBadReplicaURL(t *testing.T) {
	for _, u := range []string{"127.0.0.1:7301", "ftp://x", "http://"} {
		if _, err := newProxy([]string{u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestUnreachableGoesToNext: a request to a replica that refuses the
// connection goes to the next one, body and all, and that replica leaves
// the rotation.
func TestUnreachableGoesToNext(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // its port now refuses connections
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "live got %s", b)
	}))
	t.Cleanup(live.Close)
	p, err := newProxy([]string{deadURL, live.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	for range 3 {
		resp, err := http.Post(front.URL, "application/json", strings.NewReader(`{"x":1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != `live got {"x":1}` || resp.Header.Get(backendHeader) != "1" {
			t.Errorf("%d %q from %s, want the live replica's answer", resp.StatusCode, b, resp.Header.Get(backendHeader))
		}
	}
	if !p.backends[0].down.Load() {
		t.Error("the unreachable replica stayed in the rotation")
	}
}

// TestClosedKeptAliveGoesToNext: a replica that closes a kept-alive
// connection as a request arrives on it, before any response, gets the
// request sent to the next replica instead.
func TestClosedKeptAliveGoesToNext(t *testing.T) {
	var n atomic.Int64
	closing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // no response at all
			}
			return
		}
		fmt.Fprint(w, "closing")
	}))
	t.Cleanup(closing.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	t.Cleanup(other.Close)
	p, err := newProxy([]string{closing.URL, other.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	var got []string
	for range 3 {
		resp, err := http.Post(front.URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, b))
	}
	if want := []string{"200 closing", "200 other", "200 other"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}
}
