package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/audit"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/internal/jsonread"
	"github.com/corral-mcp/corral/host/notify"
	"github.com/corral-mcp/corral/host/tasks"
)

// Protocol versions.
const (
	// VersionModern is the stateless revision served to requests carrying
	// per-request _meta.
	VersionModern = "2026-07-28"
	// VersionLegacy is the newest revision served through initialize.
	VersionLegacy = "2025-11-25"
)

// modernVersions are the versions a request's _meta may name.
var modernVersions = []string{VersionModern}

// legacyVersions are the versions initialize may negotiate, newest first.
// 2026-07-28 is never among them: it has no initialize.
var legacyVersions = []string{VersionLegacy, "2025-06-18", "2025-03-26", "2024-11-05"}

// Options configure a Server.
type Options struct {
	// Name and Version identify the server in serverInfo (default name
	// "corral").
	Name    string
	Version string
	// Instructions is the optional natural-language guidance sent in
	// server/discover and in the legacy InitializeResult.
	Instructions string
	// DiscoverTTL is the ttlMs hint on server/discover (default 0: the
	// capabilities may change on any plugin reload).
	DiscoverTTL time.Duration
	// Logger receives request failures; nil discards.
	Logger *slog.Logger
	// AllowCompletion, when set, rate-limits completion/complete per
	// principal: false answers CodeRateLimited (HTTP 429).
	AllowCompletion func(abi.Principal) bool
	// Hub, when set, serves subscriptions: 2026-07-28
	// subscriptions/listen, and 2025-11-25 resources/subscribe plus
	// unsolicited list_changed on a session's stream. Capabilities then
	// advertise resources.subscribe and the listChanged flags.
	Hub *notify.Hub
	// TraceNames records resource URIs and prompt and tool names in the
	// request spans (trace.names); off, spans name only the method.
	TraceNames bool
	// InputTimeout bounds how long a 2025-11-25 request waits for the
	// client's answers to one round of server-to-client input requests
	// (elicitation/create, sampling/createMessage, roots/list); default
	// DefaultInputTimeout.
	InputTimeout time.Duration
	// ReplicaTag names this replica in the ids of its server-to-client
	// requests (letters and digits, no "-"), so that a client's answer
	// arriving at another replica can be forwarded here (RequestTag).
	// Empty on a single process.
	ReplicaTag string
	// Audit, when set, receives one record per request served (not
	// notifications or responses): the audit log.
	Audit func(audit.Record)
	// Tasks, when set, serves the tasks extension to 2026-07-28 requests
	// that declare it (tasks.go).
	Tasks *tasks.Manager
}

// Server answers MCP requests from the current Set of a catalog.
// It is safe for concurrent use.
type Server struct {
	cat  *catalog.Catalog
	opts Options
	log  *slog.Logger

	serverInfo []byte // {"name":…,"version":…}
	metaField  []byte // ,"_meta":{"io.modelcontextprotocol/serverInfo":…}
}

// NewServer returns a Server answering from cat's current Set.
func NewServer(cat *catalog.Catalog, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "corral"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	info, _ := json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{opts.Name, opts.Version})
	meta := append([]byte(`,"_meta":{"io.modelcontextprotocol/serverInfo":`), info...)
	meta = append(meta, '}')
	return &Server{cat: cat, opts: opts, log: log, serverInfo: info, metaField: meta}
}

// Request is the transport's context for one message.
type Request struct {
	// Session is the legacy session the message arrived in: the stdio
	// process, or the HTTP Mcp-Session-Id. It is needed for initialize and
	// for legacy requests; modern requests ignore it. May be nil.
	Session *Session
	// Principal is who the request is served for; the zero value means
	// catalog.Anonymous().
	Principal abi.Principal
	// Notify, when set, sends a notification related to this request
	// ahead of its response: progress (the request's _meta.progressToken)
	// and log messages (its _meta logLevel, or the legacy session's
	// level), which providers emit through the catalog.Sink of their call.
	Notify func(msg []byte) error
	// Header, when set, holds the HTTP headers of a modern request. A
	// tools/call checks its Mcp-Param-* headers against the arguments
	// they mirror, after the visibility check: a tool the principal may
	// not see answers exactly like a missing one, whatever its headers.
	Header http.Header
}

// Reply is the outcome of serving one message.
type Reply struct {
	// Msg is the encoded response, or nil when nothing is to be sent: a
	// notification, a client response, or a request whose context was
	// cancelled. It is a buffer of its own, which the transport may hand
	// back with Recycle once written.
	Msg []byte
	// Err is the error Msg carries, nil on success.
	Err *Error
}

// Serve answers one decoded message. It never panics: a panic while
// serving becomes a -32603 response. When ctx is cancelled before the
// answer is ready, Serve returns an empty Reply and the request gets no
// response, as cancellation requires.
func (s *Server) Serve(ctx context.Context, req Request, m *Message) (r Reply) {
	if m == nil {
		return Reply{}
	}
	if m.IsResponse {
		req.Session.Deliver(m) // an answer to a server-to-client request (bridge.go)
		return Reply{}
	}
	if m.IsNotification() {
		s.notification(req, m)
		return Reply{}
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("mcp: panic serving request", "method", m.Method, "panic", v, "stack", string(debug.Stack()))
			e := &Error{Code: CodeInternalError, Message: "Internal error."}
			r = Reply{Msg: EncodeError(m.ID, e), Err: e}
		}
	}()
	ctx, span := s.startSpan(ctx, req, m)
	defer span.End()
	start := time.Now()
	msg, err := s.dispatch(ctx, req, m)
	if err != nil {
		endSpanError(span, err)
	}
	if s.opts.Audit != nil {
		s.audited(req, m, err, ctx.Err() != nil, time.Since(start))
	}
	if ctx.Err() != nil {
		s.log.Debug("mcp: request cancelled", "method", m.Method, "id", string(m.ID))
		return Reply{}
	}
	if err != nil {
		return Reply{Msg: EncodeError(m.ID, err), Err: err}
	}
	return Reply{Msg: msg}
}

// ServeBytes decodes b and serves it; a message that does not decode is
// answered with its error (or not at all, for a broken notification).
func (s *Server) ServeBytes(ctx context.Context, req Request, b []byte) Reply {
	m, err := Decode(b)
	if err != nil {
		if !ShouldAnswer(m) {
			return Reply{}
		}
		return Reply{Msg: EncodeError(IDOf(m), err), Err: err}
	}
	return s.Serve(ctx, req, m)
}

func (s *Server) notification(req Request, m *Message) {
	switch m.Method {
	case "notifications/initialized":
		if req.Session != nil && !m.Modern() {
			req.Session.markInitialized()
		}
	default:
		// notifications/cancelled is the transport's business; the rest
		// (roots/list_changed, progress, …) needs no action.
	}
}

// era is the protocol semantics a request is served with.
type era int

const (
	eraModern era = iota
	eraLegacy
)

var errNoMeta = &Error{
	Code:     CodeInvalidParams,
	Message:  `Invalid params: _meta["io.modelcontextprotocol/protocolVersion"] is required (or call initialize first for 2025-11-25).`,
	Envelope: true,
}

func (s *Server) dispatch(ctx context.Context, req Request, m *Message) ([]byte, *Error) {
	if m.Modern() {
		return s.modern(ctx, req, m)
	}
	if m.Method == "initialize" {
		return s.initialize(req, m)
	}
	if req.Session.legacyVersion() != "" {
		return s.legacy(ctx, req, m)
	}
	return nil, errNoMeta
}

func (s *Server) modern(ctx context.Context, req Request, m *Message) ([]byte, *Error) {
	meta := m.p.Meta
	if len(meta.ClientCapabilities) == 0 || meta.ClientCapabilities[0] != '{' {
		return nil, &Error{
			Code:     CodeInvalidParams,
			Message:  `Invalid params: _meta["io.modelcontextprotocol/clientCapabilities"] must be an object.`,
			Envelope: true,
		}
	}
	if v := *meta.ProtocolVersion; !slices.Contains(modernVersions, v) {
		return nil, errorWithData(CodeUnsupportedVersion, "Unsupported protocol version", struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{modernVersions, v})
	}
	switch m.Method {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return nil, methodNotFound(m.Method, " It does not exist in 2026-07-28.")
	}
	if meta.LogLevel != nil && !validLogLevel(*meta.LogLevel) {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: unknown log level."}
	}
	switch m.Method {
	case "subscriptions/listen":
		return s.listen(ctx, req, m)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if s.opts.Tasks != nil {
			return s.taskMethod(ctx, req, m)
		}
	}
	return s.method(ctx, req, m, eraModern)
}

func (s *Server) legacy(ctx context.Context, req Request, m *Message) ([]byte, *Error) {
	switch m.Method {
	case "ping":
		return s.result(m.ID, eraLegacy, 2, func(b []byte) []byte { return append(b, "{}"...) }), nil
	case "logging/setLevel":
		if m.pErr != nil || m.p.Level == nil || !validLogLevel(*m.p.Level) {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: level must be a syslog level name."}
		}
		req.Session.setLogLevel(*m.p.Level)
		return s.result(m.ID, eraLegacy, 2, func(b []byte) []byte { return append(b, "{}"...) }), nil
	case "server/discover", "subscriptions/listen":
		return nil, methodNotFound(m.Method, " It does not exist in 2025-11-25.")
	case "resources/subscribe", "resources/unsubscribe":
		return s.subscribe(req, m)
	}
	return s.method(ctx, req, m, eraLegacy)
}

func methodNotFound(method, why string) *Error {
	return errorWithData(CodeMethodNotFound, "Method not found: "+method+"."+why, nil)
}

// method serves the methods both eras share. Every feature is served
// whatever the current Set holds (an empty list is a valid answer), as
// capabilities advertises; only a Server without a Set knows no method.
func (s *Server) method(ctx context.Context, req Request, m *Message, e era) ([]byte, *Error) {
	set := s.current()
	switch m.Method {
	case "server/discover":
	case "resources/list", "resources/templates/list", "resources/read",
		"prompts/list", "prompts/get", "tools/list", "tools/call", "completion/complete":
		if set == nil {
			return nil, methodNotFound(m.Method, "")
		}
	default:
		return nil, methodNotFound(m.Method, "")
	}
	if m.pErr != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: " + paramsProblem(m.pErr) + "."}
	}
	p := req.Principal
	if p.ID == "" {
		p = catalog.Anonymous()
	}
	r := catalog.Request{Principal: p, Input: requestInput(m, e)}
	if sink := s.newSink(req, m, e); sink != nil {
		defer sink.close()
		r.Sink = sink
	}
	var b *bridge
	if e == eraLegacy {
		if b = s.newBridge(req, m); b != nil {
			r.Input = b.input()
		}
	}
	switch m.Method {
	case "server/discover":
		return s.discover(m), nil
	case "resources/list":
		return s.list(ctx, set, r, m, e, catalog.ListResources)
	case "resources/templates/list":
		return s.list(ctx, set, r, m, e, catalog.ListTemplates)
	case "prompts/list":
		return s.list(ctx, set, r, m, e, catalog.ListPrompts)
	case "tools/list":
		return s.list(ctx, set, r, m, e, catalog.ListTools)
	case "resources/read":
		return s.read(ctx, set, r, b, m, e)
	case "prompts/get":
		return s.getPrompt(ctx, set, r, b, m, e)
	case "tools/call":
		return s.callTool(ctx, set, r, b, m, e, req.Header)
	default: // completion/complete
		if s.opts.AllowCompletion != nil && !s.opts.AllowCompletion(p) {
			return nil, errRateLimited
		}
		return s.complete(ctx, set, r, m, e)
	}
}

func (s *Server) current() *catalog.Set {
	if s.cat == nil {
		return nil
	}
	return s.cat.Current()
}

// paramsProblem describes a params decoding failure: the member and what
// was wrong with it, never the value.
func paramsProblem(err error) string {
	var te *jsonread.TypeError
	var me *jsonread.MemberError
	if errors.As(err, &te) || errors.As(err, &me) {
		return err.Error()
	}
	return "malformed params"
}

func validLogLevel(l string) bool {
	switch l {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
		return true
	}
	return false
}

// result builds a response: the envelope, then fill's result object, then
// for modern results nothing more (fill writes resultType and _meta).
// hint sizes the buffer.
func (s *Server) result(id json.RawMessage, e era, hint int, fill func([]byte) []byte) []byte {
	buf := ResponseBuffer(40 + len(id) + hint + len(s.metaField) + 32)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = fill(buf)
	return append(buf, '}')
}

// openModern starts a modern result object.
func openModern(b []byte) []byte { return append(b, `{"resultType":"complete"`...) }

// closeResult ends a result object, adding the caching fields when
// cacheable and serverInfo _meta, for modern results.
func (s *Server) closeResult(b []byte, e era, cacheable bool, ttl time.Duration, private bool) []byte {
	if e == eraModern {
		if cacheable {
			b = append(b, `,"ttlMs":`...)
			b = strconv.AppendInt(b, max(ttl.Milliseconds(), 0), 10)
			if private {
				b = append(b, `,"cacheScope":"private"`...)
			} else {
				b = append(b, `,"cacheScope":"public"`...)
			}
		}
		b = append(b, s.metaField...)
	}
	return append(b, '}')
}

// capabilities encodes the server's capabilities. They do not follow the
// current Set: a client caches them (a 2025-11-25 session for its life,
// a 2026-07-28 client for ttlMs), and one that connected while the first
// plugins loaded, or before the first tool plugin arrived, would never
// learn of what came later. live says that a notification hub serves
// subscriptions and list_changed, which tell the client when to list again.
func capabilities(b []byte, e era, live bool) []byte {
	listChanged := "{}"
	resources := "{}"
	if live {
		listChanged = `{"listChanged":true}`
		resources = `{"subscribe":true,"listChanged":true}`
	}
	b = append(b, `{"completions":{}`...)
	if e == eraLegacy {
		b = append(b, `,"logging":{}`...)
	}
	b = append(b, `,"prompts":`...)
	b = append(b, listChanged...)
	b = append(b, `,"resources":`...)
	b = append(b, resources...)
	b = append(b, `,"tools":`...)
	b = append(b, listChanged...)
	return append(b, '}')
}

func (s *Server) discover(m *Message) []byte {
	return s.result(m.ID, eraModern, 128+len(s.opts.Instructions), func(b []byte) []byte {
		b = openModern(b)
		b = append(b, `,"supportedVersions":`...)
		b = appendStrings(b, modernVersions)
		b = append(b, `,"capabilities":`...)
		b = capabilities(b, eraModern, s.opts.Hub != nil)
		if s.opts.Tasks != nil {
			b = append(b[:len(b)-1], `,"extensions":{"`+TasksExtension+`":{}}}`...)
		}
		if s.opts.Instructions != "" {
			b = append(b, `,"instructions":`...)
			b = appendString(b, s.opts.Instructions)
		}
		return s.closeResult(b, eraModern, true, s.opts.DiscoverTTL, false)
	})
}

func (s *Server) initialize(req Request, m *Message) ([]byte, *Error) {
	requested := ""
	if m.p.Version != nil {
		requested = *m.p.Version
	}
	if m.pErr != nil || m.p.Version == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: initialize needs a protocolVersion string."}
	}
	if req.Session == nil {
		// This transport keeps no sessions: name what it serves.
		return nil, errorWithData(CodeInvalidParams, "Unsupported protocol version: this endpoint serves only per-request _meta.", struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{modernVersions, requested})
	}
	if req.Session.Closed() {
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the session has ended."}
	}
	version := legacyVersions[0]
	if slices.Contains(legacyVersions, requested) {
		version = requested
	}
	s.begin(req.Session, req.Principal, version, m.p.Caps)
	return s.result(m.ID, eraLegacy, 128+len(s.opts.Instructions), func(b []byte) []byte {
		b = append(b, `{"protocolVersion":`...)
		b = appendString(b, version)
		b = append(b, `,"capabilities":`...)
		b = capabilities(b, eraLegacy, s.opts.Hub != nil)
		b = append(b, `,"serverInfo":`...)
		b = append(b, s.serverInfo...)
		if s.opts.Instructions != "" {
			b = append(b, `,"instructions":`...)
			b = appendString(b, s.opts.Instructions)
		}
		return append(b, '}')
	}), nil
}

// begin starts sess for principal p with what initialize negotiated.
func (s *Server) begin(sess *Session, p abi.Principal, version string, caps json.RawMessage) {
	sess.start(version, caps)
	if s.opts.Hub != nil {
		if p.ID == "" {
			p = catalog.Anonymous()
		}
		// Unsolicited list_changed, plus what resources/subscribe adds.
		sess.attach(s.opts.Hub.Subscribe(p, notify.Filter{
			ResourcesListChanged: true, PromptsListChanged: true, ToolsListChanged: true,
		}))
	}
}

// Resume prepares sess, fresh from NewSession, to serve a session that
// initialize opened elsewhere (on another replica, or before this process
// dropped its copy): version and caps as initialize negotiated them, for
// principal p, in state st.
func (s *Server) Resume(sess *Session, p abi.Principal, version string, caps json.RawMessage, st SessionState) {
	s.begin(sess, p, version, caps)
	sess.Restore(st)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendRaw appends items as a JSON array.
func appendRaw(b []byte, items []json.RawMessage) []byte {
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

func rawSize(items []json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += len(it) + 1
	}
	return n
}

func (s *Server) list(ctx context.Context, set *catalog.Set, r catalog.Request, m *Message, e era, kind catalog.ListKind) ([]byte, *Error) {
	cursor := ""
	if m.p.Cursor != nil {
		cursor = *m.p.Cursor
	}
	page, err := set.List(ctx, r, kind, cursor)
	if err != nil {
		return nil, s.mapError(err, m, e)
	}
	if kind == catalog.ListTools && e == eraLegacy {
		page.Items = withoutExecution(page.Items)
	}
	field := kind.String()
	hint := rawSize(page.Items) + len(field) + 96
	if page.NextCursor != nil {
		hint += len(*page.NextCursor) + 16
	}
	return s.result(m.ID, e, hint, func(b []byte) []byte {
		if e == eraModern {
			b = openModern(b)
			b = append(b, ',')
		} else {
			b = append(b, '{')
		}
		b = append(b, '"')
		b = append(b, field...)
		b = append(b, `":`...)
		b = appendRaw(b, page.Items)
		if page.NextCursor != nil {
			b = append(b, `,"nextCursor":`...)
			b = appendString(b, *page.NextCursor)
		}
		return s.closeResult(b, e, true, page.TTL, page.Private)
	}), nil
}

func (s *Server) read(ctx context.Context, set *catalog.Set, r catalog.Request, b *bridge, m *Message, e era) ([]byte, *Error) {
	if m.p.URI == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: uri is required."}
	}
	rr, err := bridged(ctx, b, r, func(r catalog.Request) (*catalog.ReadResult, error) {
		return set.ReadResource(ctx, r, m.p.URI)
	})
	if err != nil {
		return s.failed(err, m, e)
	}
	return s.result(m.ID, e, rawSize(rr.Contents)+64, func(b []byte) []byte {
		if e == eraModern {
			b = openModern(b)
			b = append(b, `,"contents":`...)
		} else {
			b = append(b, `{"contents":`...)
		}
		b = appendRaw(b, rr.Contents)
		return s.closeResult(b, e, true, rr.TTL, rr.Private)
	}), nil
}

func (s *Server) getPrompt(ctx context.Context, set *catalog.Set, r catalog.Request, b *bridge, m *Message, e era) ([]byte, *Error) {
	if m.p.Name == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: name is required."}
	}
	var args map[string]string
	if len(m.p.Arguments) > 0 && string(m.p.Arguments) != "null" {
		var err error
		if args, err = stringMap(m.p.Arguments); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: arguments must be an object of strings."}
		}
	}
	raw, err := bridged(ctx, b, r, func(r catalog.Request) (json.RawMessage, error) {
		return set.GetPrompt(ctx, r, m.p.Name, args)
	})
	if err != nil {
		return s.failed(err, m, e)
	}
	return s.spliced(m, e, raw)
}

func (s *Server) callTool(ctx context.Context, set *catalog.Set, r catalog.Request, b *bridge, m *Message, e era, h http.Header) ([]byte, *Error) {
	if m.p.Name == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: name is required."}
	}
	args := m.p.Arguments
	if string(args) == "null" {
		args = nil
	}
	if len(args) > 0 && args[0] != '{' {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: arguments must be an object."}
	}
	if h != nil && e == eraModern {
		// Only a visible tool's headers are checked; a hidden one goes on
		// to CallTool, which answers it as unknown.
		if params, visible := set.ToolParamHeaders(r.Principal, m.p.Name); visible {
			if herr := checkParamHeaders(h, args, params); herr != nil {
				return nil, herr
			}
		}
	}
	if e == eraModern {
		if msg, handled, terr := s.taskCall(set, r, m, args); handled {
			return msg, terr
		}
	}
	raw, err := bridged(ctx, b, r, func(r catalog.Request) (json.RawMessage, error) {
		return set.CallTool(ctx, r, m.p.Name, args)
	})
	if err != nil {
		return s.failed(err, m, e)
	}
	return s.spliced(m, e, raw)
}

// spliced answers with a catalog result object, adding resultType and
// serverInfo for modern results.
func (s *Server) spliced(m *Message, e era, raw json.RawMessage) ([]byte, *Error) {
	if t := bytes.TrimSpace(raw); e == eraModern && len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' {
		if inner, ok := plainResult(t); ok {
			// The common case, spliced straight into the response.
			return s.result(m.ID, e, len(inner)+len(s.metaField)+32, func(b []byte) []byte {
				b = openModern(b)
				if len(inner) > 0 {
					b = append(b, ',')
					b = append(b, inner...)
				}
				return s.closeResult(b, e, false, 0, false)
			}), nil
		}
	}
	obj, err := spliceResult(raw, e == eraModern, s.serverInfo)
	if err != nil {
		s.log.Error("mcp: catalog returned a malformed result", "method", m.Method, "err", err)
		return nil, &Error{Code: CodeInternalError, Message: "Internal error."}
	}
	return s.result(m.ID, e, len(obj), func(b []byte) []byte { return append(b, obj...) }), nil
}

func (s *Server) complete(ctx context.Context, set *catalog.Set, r catalog.Request, m *Message, e era) ([]byte, *Error) {
	ref, arg := m.p.Ref, m.p.Argument
	switch {
	case ref == nil:
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: ref is required."}
	case ref.Type == "ref/prompt" && ref.Name == "":
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: ref.name is required."}
	case ref.Type == "ref/resource" && ref.URI == "":
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: ref.uri is required."}
	case ref.Type != "ref/prompt" && ref.Type != "ref/resource":
		return nil, &Error{Code: CodeInvalidParams, Message: `Invalid params: ref.type must be "ref/prompt" or "ref/resource".`}
	case arg == nil || arg.Name == nil || arg.Value == nil:
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: argument.name and argument.value are required."}
	}
	var ctxArgs map[string]string
	if m.p.Context != nil {
		ctxArgs = m.p.Context.Arguments
	}
	c, err := set.Complete(ctx, r, abi.CompleteRef{Type: ref.Type, Name: ref.Name, URI: ref.URI},
		abi.CompleteArgument{Name: *arg.Name, Value: *arg.Value}, ctxArgs)
	if err != nil {
		return nil, s.mapError(err, m, e)
	}
	values, total, hasMore := boundCompletion(c)
	size := 2
	for _, v := range values {
		size += len(v) + 3
	}
	return s.result(m.ID, e, size+64, func(b []byte) []byte {
		if e == eraModern {
			b = openModern(b)
			b = append(b, `,"completion":{"values":`...)
		} else {
			b = append(b, `{"completion":{"values":`...)
		}
		b = appendStrings(b, values)
		if total >= 0 {
			b = append(b, `,"total":`...)
			b = strconv.AppendInt(b, int64(total), 10)
		}
		b = append(b, `,"hasMore":`...)
		b = strconv.AppendBool(b, hasMore)
		b = append(b, '}')
		return s.closeResult(b, e, false, 0, false)
	}), nil
}

// MaxCompletionValues is the most values one completion may carry.
const MaxCompletionValues = 100

// boundCompletion caps c at MaxCompletionValues and keeps total and
// hasMore honest: total is never below the values the provider had, and
// hasMore is true whenever values were left out. total is -1 when unknown.
func boundCompletion(c *abi.Completion) (values []string, total int, hasMore bool) {
	if c == nil {
		return []string{}, 0, false
	}
	values = c.Values
	if values == nil {
		values = []string{}
	}
	total = -1
	if c.Total != nil {
		total = max(*c.Total, len(values))
	}
	hasMore = c.HasMore
	if len(values) > MaxCompletionValues {
		if total < 0 {
			total = len(values)
		}
		values = values[:MaxCompletionValues]
		hasMore = true
	}
	if total > len(values) {
		hasMore = true
	}
	return values, total, hasMore
}
