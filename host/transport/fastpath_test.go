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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readBody(tt.r, tt.length, 1<<20)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readBody error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, string(got)); !tt.wantErr && diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
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
