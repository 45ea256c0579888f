package plugin

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestReleaseWait(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		since time.Duration // from the first unreleased event to this one
		want  time.Duration
	}{
		{"the first event", 0, time.Second},
		{"an event soon after", 3 * time.Second, time.Second},
		{"the bound nearer than the quiet time", (releaseBound - 1) * time.Second / 2 * 2, time.Second},
		{"half a second before the bound", releaseBound*time.Second - 500*time.Millisecond, 500 * time.Millisecond},
		{"past the bound", releaseBound*time.Second + time.Minute, 0},
	} {
		if got := releaseWait(t0, t0.Add(c.since), time.Second); got != c.want {
			t.Errorf("%s (%s after the first): release in %s, want %s", c.name, c.since, got, c.want)
		}
	}
}

// TestReleaserBurst: a burst of life-cycle events is followed by one
// release; a closed releaser, and one never told of an event, release
// nothing.
func TestReleaserBurst(t *testing.T) {
	r := newReleaser(200*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 100 {
		r.note()
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.releases.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no release after a burst of events")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // five quiet times: a second release would have come
	if n := r.releases.Load(); n != 1 {
		t.Errorf("%d releases after one burst, want 1", n)
	}
	r.close()
	r.note()
	time.Sleep(time.Second)
	if n := r.releases.Load(); n != 1 {
		t.Errorf("%d releases once closed, want still 1", n)
	}
	if newReleaser(0, slog.New(slog.NewTextHandler(io.Discard, nil))) != nil {
		t.Error("a releaser without ReleaseAfter exists")
	}
	var none *releaser
	none.note() // nil: does nothing
	none.close()
}
