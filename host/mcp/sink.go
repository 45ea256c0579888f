package mcp

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/corral-mcp/corral/host/catalog"
)

// logLevels are the syslog level names of MCP logging, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// severity returns the rank of a level name, or -1.
func severity(level string) int {
	for i, l := range logLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// requestSink delivers one request's progress and log notifications
// through the transport's Request.Notify, ahead of the response. It
// implements catalog.Sink.
type requestSink struct {
	notify   func([]byte) error
	token    json.RawMessage // _meta.progressToken; nil: no progress wanted
	minLevel int             // least severe level sent; -1: no log messages

	mu   sync.Mutex
	last float64
	sent bool // a progress notification was sent
	done bool // the response is on its way: send nothing more
}

// newSink returns a requestSink when the request can receive
// request-scoped notifications and asked for some, else nil. Serve closes
// it before responding.
func (s *Server) newSink(req Request, m *Message, e era) *requestSink {
	if req.Notify == nil || m.ID == nil {
		return nil
	}
	var token json.RawMessage
	if meta := m.p.Meta; meta != nil && validToken(meta.ProgressToken) {
		token = meta.ProgressToken
	}
	minLevel := -1
	switch e {
	case eraModern:
		if meta := m.p.Meta; meta != nil && meta.LogLevel != nil {
			minLevel = severity(*meta.LogLevel)
		}
	case eraLegacy:
		if req.Session != nil {
			minLevel = severity(req.Session.LogLevel())
		}
	}
	if token == nil && minLevel < 0 {
		return nil // most requests: no sink to allocate
	}
	return &requestSink{notify: req.Notify, token: token, minLevel: minLevel}
}

// validToken reports whether raw is a progress token: a string or a number.
func validToken(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// close stops the sink: the response follows, and nothing may come after it.
func (rs *requestSink) close() {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	rs.done = true
	rs.mu.Unlock()
}

// Progress implements catalog.Sink.
func (rs *requestSink) Progress(progress, total float64, message string) bool {
	if rs.token == nil {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done || (rs.sent && progress <= rs.last) {
		return false
	}
	b := make([]byte, 0, 128+len(rs.token)+len(message))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, rs.token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" {
		b = append(b, `,"message":`...)
		b = appendString(b, message)
	}
	b = append(b, "}}"...)
	if rs.notify(b) != nil {
		return false
	}
	rs.last, rs.sent = progress, true
	return true
}

// Log implements catalog.Sink.
func (rs *requestSink) Log(level, logger, message string) bool {
	sev := severity(level)
	if rs.minLevel < 0 || sev < rs.minLevel {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done {
		return false
	}
	b := make([]byte, 0, 96+len(logger)+len(message))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`...)
	b = appendString(b, level)
	if logger != "" {
		b = append(b, `,"logger":`...)
		b = appendString(b, logger)
	}
	b = append(b, `,"data":`...)
	b = appendString(b, message)
	b = append(b, "}}"...)
	return rs.notify(b) == nil
}

var _ catalog.Sink = (*requestSink)(nil)
