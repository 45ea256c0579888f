package transport

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestSplitHost(t *testing.T) {
	tests := []struct {
		in, name, port string
	}{
		{"localhost", "localhost", ""},
		{"localhost:80", "localhost", "80"},
		{"[::1]", "::1", ""},
		{"[::1]:8080", "::1", "8080"},
		{"[v6name]", "v6name", ""},
		{"::1", "::1", ""},
		{"127.0.0.1", "127.0.0.1", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, port := splitHost(tt.in)
			if name != tt.name || port != tt.port {
				t.Errorf("splitHost(%q) = %q, %q; want %q, %q", tt.in, name, port, tt.name, tt.port)
			}
		})
	}
}

func TestReadBody(t *testing.T) {
	body := strings.Repeat("x", 700)
	big := strings.Repeat("y", 3*bodyChunk+17)
	tests := []struct {
		name    string
		r       io.Reader
		length  int64
		want    string
		wantErr bool
	}{
		{"announced", strings.NewReader(body), 700, body, false},
		{"unknown length", strings.NewReader(body), -1, body, false},
		{"longer than announced", strings.NewReader(body), 10, body, false},
		{"shorter than announced", strings.NewReader(body), 900, body, false},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(body)), 700, body, false},
		{"announced over the limit", strings.NewReader(body), 1 << 30, body, false},
		{"empty", strings.NewReader(""), 0, "", false},
		{"read error", iotest.ErrReader(errors.New("boom")), 700, "", true},
		{"longer than a chunk, announced", strings.NewReader(big), int64(len(big)), big, false},
		{"longer than a chunk, unknown length", iotest.HalfReader(strings.NewReader(big)), -1, big, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readBody(tt.r, tt.length)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readBody error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, string(got)); !tt.wantErr && diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadBodyGrowsWithArrivals: a body announcing 4 MiB that sends 700
// bytes takes a buffer of at most bodyChunk, not of the announced size
// (issue 13 item 3); a body that does send its announced size ends in a
// buffer no larger than it.
func TestReadBodyGrowsWithArrivals(t *testing.T) {
	got, err := readBody(strings.NewReader(strings.Repeat("x", 700)), 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if cap(got) > bodyChunk+1 {
		t.Errorf("700 bytes announced as 4 MiB: buffer of %d bytes, want at most %d", cap(got), bodyChunk+1)
	}
	full := strings.Repeat("y", 1<<20)
	got, err = readBody(strings.NewReader(full), int64(len(full)))
	if err != nil || string(got) != full {
		t.Fatalf("1 MiB body: %v, %d bytes", err, len(got))
	}
	if cap(got) > len(full)+1 {
		t.Errorf("1 MiB body: buffer of %d bytes, want at most %d", cap(got), len(full)+1)
	}
}

// TestPostBodyLimit: a body over MaxBodyBytes gets 413 whether its length
// is announced or not.
func TestPostBodyLimit(t *testing.T) {
	h, _ := newHTTP(t, HTTPOptions{MaxBodyBytes: 64})
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + strings.Repeat("a", 100) + `"}}`
	for _, announced := range []bool{true, false} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		if !announced {
			req.ContentLength = -1
		}
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("announced %v: status %d, want 413", announced, w.Code)
		}
	}
}
