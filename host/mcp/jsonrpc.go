package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// JSON-RPC and MCP error codes (spec 2026-07-28 §Error codes).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeResourceNotFoundLegacy is the 2025-11-25 resource-not-found
	// code; it is only sent in legacy sessions.
	CodeResourceNotFoundLegacy = -32002
	// CodeHeaderMismatch: an HTTP header is missing, malformed or differs
	// from the body.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: serving the request needs a client
	// capability the request did not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedVersion: the request's protocol version is not served.
	CodeUnsupportedVersion = -32022
)

// Error is a JSON-RPC error object as sent to a client.
type Error struct {
	Code    int
	Message string
	// Data is the encoded "data" member, or nil for none.
	Data json.RawMessage
	// Envelope is true when the error concerns the request's envelope
	// (framing, required _meta) rather than its method's parameters;
	// Streamable HTTP answers such errors with status 400.
	Envelope bool
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("mcp: %s (%d)", e.Message, e.Code)
}

// errorWithData builds an Error whose data is the JSON encoding of data.
func errorWithData(code int, msg string, data any) *Error {
	e := &Error{Code: code, Message: msg}
	if data != nil {
		b, err := json.Marshal(data)
		if err == nil {
			e.Data = b
		}
	}
	return e
}

// Message is one decoded client message: a request (ID set), a
// notification (no ID) or a response to a server request (IsResponse).
type Message struct {
	// ID is the request id exactly as the client wrote it (a JSON string
	// or integer); nil for notifications.
	ID json.RawMessage
	// Method is the method name; empty for responses.
	Method string
	// Params is the raw params object, nil when absent or null.
	Params json.RawMessage
	// IsResponse is true for a client's response to a server request.
	IsResponse bool

	hadID  bool   // the id member was present
	p      params // decoded params
	pErr   error  // why params did not decode, if they did not
	modern bool   // params._meta carries a protocol version

	result json.RawMessage // a response's result member
	rpcErr json.RawMessage // a response's error member
}

// IsNotification reports whether m is a notification (no response).
func (m *Message) IsNotification() bool { return m.ID == nil && !m.IsResponse }

// Modern reports whether m carries
// _meta["io.modelcontextprotocol/protocolVersion"], which selects the
// stateless 2026-07-28 path.
func (m *Message) Modern() bool { return m.modern }

// ProtocolVersion returns the version m's _meta names, or "".
func (m *Message) ProtocolVersion() string {
	if m.p.Meta == nil || m.p.Meta.ProtocolVersion == nil {
		return ""
	}
	return *m.p.Meta.ProtocolVersion
}

// HeaderName returns the value the Mcp-Name HTTP header must carry for m:
// params.uri for resources/read, params.name for prompts/get and
// tools/call, params.taskId for tasks/get, tasks/update and tasks/cancel.
// ok is false for other methods.
func (m *Message) HeaderName() (name string, ok bool) {
	switch m.Method {
	case "resources/read":
		return m.p.URI, true
	case "prompts/get", "tools/call":
		return m.p.Name, true
	case "tasks/get", "tasks/update", "tasks/cancel":
		return m.p.TaskID, true
	}
	return "", false
}

// CancelledID returns the requestId of a notifications/cancelled message,
// raw as the client wrote it, or nil.
func (m *Message) CancelledID() json.RawMessage {
	if m.Method != "notifications/cancelled" {
		return nil
	}
	return m.p.RequestID
}

// requestMeta is the part of params._meta the server reads.
type requestMeta struct {
	ProtocolVersion    *string         `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel           *string         `json:"io.modelcontextprotocol/logLevel"`
	ProgressToken      json.RawMessage `json:"progressToken"`
	// TraceParent and TraceState are the client's W3C trace context
	// (SEP-414); a trace links to it, never inherits from it.
	TraceParent *string `json:"traceparent"`
	TraceState  *string `json:"tracestate"`
}

// params is the union of every params member any method reads; one decode
// serves every method.
type params struct {
	Meta *requestMeta `json:"_meta"`

	Cursor    *string         `json:"cursor"`
	URI       string          `json:"uri"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`

	Ref      *refParam       `json:"ref"`
	Argument *argumentParam  `json:"argument"`
	Context  *contextParam   `json:"context"`
	Level    *string         `json:"level"`
	Version  *string         `json:"protocolVersion"` // initialize
	Caps     json.RawMessage `json:"capabilities"`    // initialize

	RequestID json.RawMessage `json:"requestId"` // notifications/cancelled

	Notifications *listenFilter `json:"notifications"` // subscriptions/listen

	InputResponses json.RawMessage `json:"inputResponses"` // MRTR retries
	RequestState   *string         `json:"requestState"`   // MRTR retries

	TaskID string `json:"taskId"` // tasks/get, tasks/update, tasks/cancel
}

type refParam struct {
	Type string `json:"type"`
	Name string `json:"name"`
	URI  string `json:"uri"`
}

type argumentParam struct {
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

type contextParam struct {
	Arguments map[string]string `json:"arguments"`
}

// Decode parses one JSON-RPC message (decode.go).
//
// On failure it returns the error to send. The returned Message is then
// nil if the input was not a readable JSON-RPC object; otherwise it holds
// what could be read (ID, Method), so that the caller echoes the id, and
// stays silent when the broken message was a notification.
func Decode(b []byte) (*Message, *Error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: empty message.", Envelope: true}
	}
	switch b[0] {
	case '{':
		return decodeMessage(b)
	case '[':
		if !wellFormed(b) {
			return nil, errParse
		}
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: JSON-RPC batches are not supported; send one message at a time.", Envelope: true}
	}
	if !wellFormed(b) {
		return nil, errParse
	}
	return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a message must be a JSON object.", Envelope: true}
}

// wellFormed reports whether b is one JSON value in valid UTF-8.
func wellFormed(b []byte) bool {
	d := jsonread.NewDecoder(b)
	d.Skip()
	return d.End() == nil
}

// ShouldAnswer reports whether a message that failed to Decode gets an
// error response: everything but a broken notification does.
func ShouldAnswer(m *Message) bool { return m == nil || m.hadID || m.Method == "" }

// IDOf returns m's id for an error response, or nil.
func IDOf(m *Message) json.RawMessage {
	if m == nil {
		return nil
	}
	return m.ID
}

// EncodeError encodes a JSON-RPC error response. id may be nil when the
// request's id could not be read; the member is then omitted.
func EncodeError(id json.RawMessage, e *Error) []byte {
	buf := make([]byte, 0, 96+len(e.Message)+len(e.Data)+len(id))
	buf = append(buf, `{"jsonrpc":"2.0",`...)
	if id != nil {
		buf = append(buf, `"id":`...)
		buf = append(buf, id...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"error":{"code":`...)
	buf = strconv.AppendInt(buf, int64(e.Code), 10)
	buf = append(buf, `,"message":`...)
	buf = appendString(buf, e.Message)
	if e.Data != nil {
		buf = append(buf, `,"data":`...)
		buf = append(buf, e.Data...)
	}
	buf = append(buf, "}}"...)
	return buf
}

// appendString appends s as a JSON string.
func appendString(buf []byte, s string) []byte {
	if isPlainASCII(s) {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	b, _ := json.Marshal(s) // a string always encodes
	return append(buf, b...)
}

// isPlainASCII reports whether s needs no escaping in JSON (including the
// HTML escaping encoding/json applies).
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
