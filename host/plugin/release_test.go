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
		name string
		next time.Time // no release before
		want time.Duration
	}{
		{"no release yet", time.Time{}, time.Second},
		{"long after the last release", t0.Add(-time.Hour), time.Second},
		{"4 s of spacing left", t0.Add(4 * time.Second), 4 * time.Second},
		{"half a second of spacing left", t0.Add(500 * time.Millisecond), time.Second},
	} {
		if got := releaseWait(c.next, t0, time.Second); got != c.want {
			t.Errorf("%s: release in %s, want %s", c.name, got, c.want)
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
	// A wake-up holds releases off until it ends.
	r.begin()
	r.note()
	time.Sleep(time.Second)
	if n := r.releases.Load(); n != 1 {
		t.Errorf("%d releases while a wake-up runs, want still 1", n)
	}
	r.end()
	for deadline := time.Now().Add(10 * time.Second); r.releases.Load() == 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no release after the wake-up ended")
		}
	}
	r.close()
	r.note()
	time.Sleep(time.Second)
	if n := r.releases.Load(); n != 2 {
		t.Errorf("%d releases once closed, want still 2", n)
	}
	if newReleaser(0, slog.New(slog.NewTextHandler(io.Discard, nil))) != nil {
		t.Error("a releaser without ReleaseAfter exists")
	}
	var none *releaser
	none.note() // nil: does nothing
	none.close()
}
