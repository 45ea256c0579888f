package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/corral-mcp/corral/host/notify"
)

// Session holds the state of one legacy (2025-11-25) session: the stdio
// process, or one HTTP Mcp-Session-Id. Modern requests never read it.
// The zero value is not initialized; use NewSession. A Session is safe for
// concurrent use.
type Session struct {
	id   string
	done chan struct{} // closed by Close

	mu          sync.Mutex
	version     string // negotiated by initialize; "" before
	initialized bool   // notifications/initialized seen
	logLevel    string
	closed      bool
	sub         *notify.Subscription         // legacy subscriptions, when a hub serves them
	caps        json.RawMessage              // the client's capabilities, from initialize
	pending     map[string]chan clientAnswer // server-to-client requests awaiting answers (bridge.go)
}

// NewSession returns a fresh session. id names it in logs (and is the HTTP
// Mcp-Session-Id); it may be empty for stdio.
func NewSession(id string) *Session { return &Session{id: id, done: make(chan struct{})} }

// Done is closed when the session ends (Close).
func (s *Session) Done() <-chan struct{} { return s.done }

// ID returns the id the session was created with.
func (s *Session) ID() string { return s.id }

// Version returns the legacy protocol version negotiated by initialize, or
// "" when the session has not seen initialize.
func (s *Session) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Initialized reports whether the client sent notifications/initialized.
func (s *Session) Initialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

// LogLevel returns the level set by logging/setLevel, or "".
func (s *Session) LogLevel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

// Close ends the session; later legacy requests in it are refused as if
// it had never been initialized.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		close(s.done)
	}
	s.closed = true
	s.version = ""
	s.endPendingLocked()
	if s.sub != nil {
		s.sub.Close()
	}
}

// Subscription returns the session's subscription to the notification
// hub (unsolicited list_changed and the resources it subscribed to), or
// nil before initialize or without a hub. The transport drains it onto the
// session's stream (stdio; the HTTP GET stream) with Pump.
func (s *Session) Subscription() *notify.Subscription {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sub
}

// attach gives the session its subscription, replacing (and closing) any
// earlier one; on a closed session sub is closed at once.
func (s *Session) attach(sub *notify.Subscription) {
	s.mu.Lock()
	old := s.sub
	if s.closed {
		s.mu.Unlock()
		sub.Close()
		return
	}
	s.sub = sub
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Closed reports whether Close was called.
func (s *Session) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Session) legacyVersion() string {
	if s == nil {
		return ""
	}
	return s.Version()
}

func (s *Session) start(version string, caps json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.version = version
		s.initialized = false
		s.caps = nil
		if t := bytes.TrimSpace(caps); len(t) > 0 && t[0] == '{' {
			s.caps = append(json.RawMessage(nil), t...)
		}
	}
}

func (s *Session) markInitialized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version != "" {
		s.initialized = true
	}
}

func (s *Session) setLogLevel(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = l
}

// SessionState is what of a legacy session changes after initialize: what
// must follow the session to another replica (host/session keeps it).
type SessionState struct {
	Initialized bool     // notifications/initialized seen
	LogLevel    string   // set by logging/setLevel, or ""
	Resources   []string // subscribed resource URIs, sorted
}

// State returns the session's state now.
func (s *Session) State() SessionState {
	s.mu.Lock()
	st := SessionState{Initialized: s.initialized, LogLevel: s.logLevel}
	sub := s.sub
	s.mu.Unlock()
	if sub != nil {
		st.Resources = sub.Filter().Resources
	}
	return st
}

// Restore sets the session's state to st: a change made through another
// replica, or the state of a session this replica resumes.
func (s *Session) Restore(st SessionState) {
	s.mu.Lock()
	if s.version != "" {
		s.initialized = st.Initialized
	}
	s.logLevel = st.LogLevel
	sub := s.sub
	s.mu.Unlock()
	if sub == nil {
		return
	}
	have := sub.Filter().Resources
	for _, u := range have {
		if !slices.Contains(st.Resources, u) {
			sub.Remove(u)
		}
	}
	for _, u := range st.Resources {
		if !slices.Contains(have, u) {
			sub.Add(u)
		}
	}
}
