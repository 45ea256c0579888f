//go:build !wasip1

package corral

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProgressOnFakeHost(t *testing.T) {
	h := NewFakeHost() // progress needs no capability
	defer UseHost(h)()
	tests := []struct {
		name            string
		progress, total float64
		msg             string
		want            error
	}{
		{"first", 0, 100, "start", nil},
		{"increase", 50, 100, "", nil},
		{"not increasing", 50, 100, "", ErrInvalid},
		{"NaN", math.NaN(), 0, "", ErrInvalid},
		{"negative total", 60, -1, "", ErrInvalid},
		{"message too long", 70, 0, strings.Repeat("x", 4<<10+1), ErrTooLarge},
		{"last", 100, 100, "done", nil},
	}
	for _, tt := range tests {
		err := Progress(tt.progress, tt.total, tt.msg)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: Progress(%v, %v) = %v, want %v", tt.name, tt.progress, tt.total, err, tt.want)
		}
	}
	want := []FakeProgress{{0, 100, "start"}, {50, 100, ""}, {100, 100, "done"}}
	if diff := cmp.Diff(want, h.Progress()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	h.ResetProgress()
	if err := Progress(1, 0, ""); err != nil {
		t.Errorf("after reset: %v", err)
	}
}
