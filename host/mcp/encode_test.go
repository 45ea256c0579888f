package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendStringsMatchesMarshal: completion values are encoded by hand
// exactly as encoding/json encodes a []string (HTML escaping, invalid
// UTF-8 replaced, control characters escaped).
func TestAppendStringsMatchesMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   []string
	}{
		{"empty", []string{}},
		{"plain", []string{"a", "b c", "cand-0042"}},
		{"html", []string{"<b>", "a&b", `q"uote`, `back\slash`}},
		{"non-ASCII", []string{"é", "日本", "\u2028"}},
		{"control and invalid UTF-8", []string{"\x00\n\t", "\xff\xfe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(appendStrings(nil, tt.in))); diff != "" {
				t.Errorf("(-json.Marshal +appendStrings):\n%s", diff)
			}
		})
	}
}
