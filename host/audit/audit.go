// Package audit writes corral's audit log: one JSON line per MCP request
// that names who asked for what and how it ended (time, principal,
// method, target, plugin, outcome, duration), never what was read, sent
// or answered.
package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Version is the format of a line, its "v" field. A reader refuses lines
// of a version it does not know (ParseLine).
const Version = 1

// Outcomes of a request.
const (
	OutcomeOK     = "ok"     // answered with a result
	OutcomeDenied = "denied" // the target exists but the policy hides it from the principal
	OutcomeError  = "error"  // answered with an error (Code says which)
	// OutcomeCancelled is a request the client cancelled (or whose
	// connection went away) before its answer: it got none.
	OutcomeCancelled = "cancelled"
)

// Record is one request. It holds names only: no argument, content or
// token.
type Record struct {
	V         int       `json:"v"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Method    string    `json:"method"`
	Target    string    `json:"target,omitempty"` // the URI, prompt or tool name
	Plugin    string    `json:"plugin,omitempty"` // the plugin that owns the target
	Outcome   string    `json:"outcome"`
	Code      int       `json:"code,omitempty"` // the JSON-RPC error code, for OutcomeError and OutcomeDenied
	// DurationMS is how long serving took, in milliseconds.
	DurationMS float64 `json:"durationMs"`
}

// Log appends Records to a file. It is safe for concurrent use.
type Log struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// Open opens (creating, mode 0600) the audit log at path for appending.
func Open(path string) (*Log, error) {
	l := &Log{path: path}
	if err := l.Reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

// Reopen closes the file and opens path again: after a rotation
// (SIGHUP), the log goes on in a new file of the same name.
func (l *Log) Reopen() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Write appends r as one line, stamped with the format's version.
func (l *Log) Write(r Record) error {
	r.V = Version
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// ParseLine reads one line of an audit log, refusing a version it does
// not know.
func ParseLine(line []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("audit: %w", err)
	}
	if r.V != Version {
		return Record{}, fmt.Errorf("audit: line of format version %d; this corral reads version %d", r.V, Version)
	}
	return r, nil
}
