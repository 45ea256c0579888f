package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogLines: records are appended one JSON line each, stamped with the
// format version, to a file only its owner may read; Reopen goes on in a
// new file after a rotation; a line of another version is refused.
func TestLogLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := Record{Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Principal: "alice", Method: "resources/read",
		Target: "issues://1", Plugin: "issues", Outcome: OutcomeOK, DurationMS: 1.5}
	if err := l.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path + ".1", path} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"v":1,"time":"2026-12-01T12:00:00Z","principal":"alice","method":"resources/read","target":"issues://1","plugin":"issues","outcome":"ok","durationMs":1.5}` + "\n"
		if string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
		}
		got, err := ParseLine([]byte(strings.TrimSpace(string(b))))
		if err != nil || got.Principal != "alice" || got.V != Version {
			t.Errorf("ParseLine: %+v, %v", got, err)
		}
	}
	for _, line := range []string{`{"v":2,"principal":"x"}`, `{"principal":"x"}`} {
		if _, err := ParseLine([]byte(line)); err == nil || !strings.Contains(err.Error(), "format version") {
			t.Errorf("ParseLine(%s) = %v, want a version refusal", line, err)
		}
	}
}
