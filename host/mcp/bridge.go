package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// The 2025-11-25 input bridge. A plugin asks the client for input the
// 2026-07-28 way (input_required); on a legacy session, which has no
// input_required, the server sends the plugin's input requests to the
// client as server-to-client JSON-RPC requests on the request's own
// stream (Request.Notify), waits for the client's responses (which the
// transport hands back to Serve), and calls the plugin again with them and
// its sealed state, for at most MaxInputRounds rounds.

// Bounds of the 2025 input bridge.
const (
	// DefaultInputTimeout is how long one round waits for the client's
	// answers when Options.InputTimeout is zero.
	DefaultInputTimeout = 2 * time.Minute
	// MaxInputRounds is the most rounds of input one request may ask for.
	MaxInputRounds = 8
)

// clientAnswer is a client's response to a server-to-client request.
type clientAnswer struct {
	result json.RawMessage // the result member, nil on error
	err    json.RawMessage // the error member, nil on success
	ended  bool            // the session ended before an answer came
}

// bridge is what one legacy request needs to ask its client for input.
type bridge struct {
	sess    *Session
	notify  func([]byte) error
	caps    json.RawMessage
	timeout time.Duration
	tag     string // Options.ReplicaTag
}

// newBridge returns the legacy input bridge for the methods that may need
// input, when the session declared client capabilities at initialize and
// the transport can send ahead of the response; else nil. The request's
// catalog.Input then carries those capabilities (bridge.input), so the
// catalog still refuses input the client cannot give
// (MissingCapabilityError).
func (s *Server) newBridge(req Request, m *Message) *bridge {
	if req.Session == nil || req.Notify == nil || m.ID == nil {
		return nil
	}
	switch m.Method {
	case "resources/read", "prompts/get", "tools/call":
	default:
		return nil
	}
	caps := req.Session.ClientCapabilities()
	if caps == nil {
		return nil
	}
	timeout := s.opts.InputTimeout
	if timeout <= 0 {
		timeout = DefaultInputTimeout
	}
	return &bridge{sess: req.Session, notify: req.Notify, caps: caps, timeout: timeout, tag: s.opts.ReplicaTag}
}

// input is the first round's catalog.Input: the session's capabilities.
func (b *bridge) input() *catalog.Input { return &catalog.Input{Capabilities: b.caps} }

// bridged runs call with r, and while it comes back input_required on a
// bridged legacy request (b not nil), asks the client and runs it again
// with the answers.
func bridged[T any](ctx context.Context, b *bridge, r catalog.Request, call func(catalog.Request) (T, error)) (T, error) {
	v, err := call(r)
	if b == nil {
		return v, err
	}
	for round := 1; ; round++ {
		var ir *catalog.InputRequiredError
		if !errors.As(err, &ir) {
			return v, err
		}
		if round > MaxInputRounds {
			var zero T
			return zero, &Error{Code: CodeInternalError,
				Message: fmt.Sprintf("Internal error: the request asked the client for input more than %d times.", MaxInputRounds)}
		}
		in, aerr := b.ask(ctx, ir.Result)
		if aerr != nil {
			var zero T
			return zero, aerr
		}
		r.Input = in
		v, err = call(r)
	}
}

// inputRequired is the InputRequiredResult the catalog produced.
type inputRequired struct {
	InputRequests map[string]abi.InputRequest `json:"inputRequests"`
	RequestState  string                      `json:"requestState"`
}

// outgoing is one server-to-client request awaiting its response.
type outgoing struct {
	key, id, method string // key: the input request's key
	ch              chan clientAnswer
}

// ask sends one round of input requests to the client and waits for every
// answer; it returns the retried request's Input.
func (b *bridge) ask(ctx context.Context, raw json.RawMessage) (*catalog.Input, error) {
	var ir inputRequired
	if err := jsonread.Unmarshal(raw, &ir); err != nil {
		return nil, fmt.Errorf("mcp: input bridge: %w", err)
	}
	out := make([]outgoing, 0, len(ir.InputRequests))
	defer func() {
		for _, o := range out {
			b.sess.forget(o.id)
		}
	}()
	for key, r := range ir.InputRequests {
		id, err := newRequestID(b.tag)
		if err != nil {
			return nil, err
		}
		o := outgoing{key: key, id: id, method: r.Method, ch: b.sess.expect(id)}
		out = append(out, o)
		if err := b.notify(encodeRequest(id, r.Method, r.Params)); err != nil {
			return nil, fmt.Errorf("mcp: input bridge: send %s: %w", r.Method, err)
		}
	}
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	answers := make(map[string]json.RawMessage, len(out))
	for i, o := range out {
		var a clientAnswer
		select {
		case a = <-o.ch:
		case <-ctx.Done():
			b.cancel(out[i:], "the request was cancelled")
			return nil, ctx.Err()
		case <-timer.C:
			b.cancel(out[i:], "no answer in time")
			return nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf(
				"Internal error: the client did not answer %s within %s.", o.method, b.timeout)}
		}
		switch {
		case a.ended:
			return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the session has ended."}
		case a.err != nil:
			return nil, clientRefused(o.method, a.err)
		}
		answers[o.key] = a.result
	}
	resp, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("mcp: input bridge: %w", err)
	}
	state := ir.RequestState
	return &catalog.Input{Capabilities: b.caps, Responses: resp, State: &state}, nil
}

// cancel tells the client, best effort, that the requests still
// unanswered are no longer wanted.
func (b *bridge) cancel(out []outgoing, reason string) {
	for _, o := range out {
		msg := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
		msg = appendString(msg, o.id)
		msg = append(msg, `,"reason":`...)
		msg = appendString(msg, reason)
		msg = append(msg, "}}"...)
		_ = b.notify(msg)
	}
}

// clientRefused is the error of a request whose client answered an input
// request with a JSON-RPC error.
func clientRefused(method string, raw json.RawMessage) *Error {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = jsonread.Unmarshal(raw, &e) // the client's own error: only its code is shown
	return errorWithData(CodeInternalError,
		fmt.Sprintf("Internal error: the client answered %s with error %d.", method, e.Code),
		struct {
			Method      string          `json:"method"`
			ClientError json.RawMessage `json:"clientError"`
		}{method, raw})
}

// encodeRequest encodes a server-to-client request.
func encodeRequest(id, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 64+len(id)+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendString(b, id)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if t := bytes.TrimSpace(params); len(t) > 0 && t[0] == '{' {
		b = append(b, `,"params":`...)
		b = append(b, t...)
	}
	return append(b, '}')
}

// newRequestID mints a server-to-client request id: a string (clients'
// own ids are theirs; ours only ever come back as responses) of 128 random
// bits, so that no other session can guess it, after the replica's tag.
func newRequestID(tag string) (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("mcp: request id: %w", err)
	}
	return requestIDPrefix + tag + "-" + hex.EncodeToString(r[:]), nil
}

const requestIDPrefix = "corral-"

// RequestTag returns the replica tag (Options.ReplicaTag) in the id of a
// client's response m to a server-to-client request, and whether m is such
// a response: the replica whose bridge waits for it.
func RequestTag(m *Message) (string, bool) {
	if m == nil || !m.IsResponse || len(m.ID) == 0 || m.ID[0] != '"' {
		return "", false
	}
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(id, requestIDPrefix)
	if !ok {
		return "", false
	}
	tag, _, ok := strings.Cut(rest, "-")
	return tag, ok
}

// ClientCapabilities returns the capabilities the client declared at
// initialize, or nil.
func (s *Session) ClientCapabilities() json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == "" {
		return nil
	}
	return s.caps
}

// expect registers a server-to-client request id awaiting its response.
func (s *Session) expect(id string) chan clientAnswer {
	ch := make(chan clientAnswer, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ch <- clientAnswer{ended: true}
		return ch
	}
	if s.pending == nil {
		s.pending = map[string]chan clientAnswer{}
	}
	s.pending[id] = ch
	return ch
}

// forget drops a request id, answered or not.
func (s *Session) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, id)
}

// Deliver routes a client's response to the server-to-client request it
// answers, within this session only, and reports whether a request of
// this session's bridge waited for it; a response nobody waits for is
// dropped.
func (s *Session) Deliver(m *Message) bool {
	if s == nil || len(m.ID) == 0 || m.ID[0] != '"' {
		return false
	}
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return false
	}
	s.mu.Lock()
	ch, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if !ok {
		return false
	}
	ch <- clientAnswer{result: m.result, err: m.rpcErr}
	return true
}

// endPending fails every wait in flight; the session is over. The caller
// holds s.mu.
func (s *Session) endPendingLocked() {
	for id, ch := range s.pending {
		ch <- clientAnswer{ended: true}
		delete(s.pending, id)
	}
}
