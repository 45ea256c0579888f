package corral

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendStringEveryPosition puts each byte that needs care at every
// position of strings long enough for the 8-byte fast path, and compares
// with encoding/json (HTML escaping off).
func TestAppendStringEveryPosition(t *testing.T) {
	specials := []string{"\"", "\\", "\x00", "\x1f", "\n", "\x7f", " ", "é", "\u2028", "\xff"}
	for _, sp := range specials {
		for n := 0; n <= 24; n++ {
			for pos := 0; pos <= n; pos++ {
				s := strings.Repeat("a", pos) + sp + strings.Repeat("b", n-pos)
				got := appendString(nil, s)
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(s); err != nil {
					t.Fatal(err)
				}
				if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
					t.Fatalf("appendString(%q) = %s, want %s", s, got, w)
				}
			}
		}
	}
}

func TestPlain8(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"abcdefgh", true},
		{"        ", true},
		{"~~~~~~~~", true},
		{"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", true},
		{"abcdefg\"", false},
		{"\\bcdefgh", false},
		{"abc\x1fefgh", false},
		{"abcd\x00fgh", false},
		{"abcdefg\x80", false},
		{"!#!#!#!#", true},
		{"[]]]]]]]", true},
	}
	for _, tt := range tests {
		if got := plain8(tt.in); got != tt.want {
			t.Errorf("plain8(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
