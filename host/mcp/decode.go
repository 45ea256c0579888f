package mcp

import (
	"bytes"
	"strconv"

	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// Reading a client message: one strict pass over the envelope and the
// params together (host/internal/jsonread). A repeated member, or one
// that matches a known member only by case, is refused: in the envelope
// with -32600, in params with -32602, the member named in the message.
// Unknown members are ignored, and the values the server passes on
// without reading (arguments below their top level, capabilities,
// _meta values it does not read) are checked for well-formedness alone.
// Otherwise the rules are encoding/json's, and on a message without
// repeated or case-folded names the result is what encoding/json would
// decode into the structs of jsonrpc.go (FuzzDecode holds the two side
// by side).

// Member names per object.
var (
	envelopeNames = jsonread.NewNames("jsonrpc", "id", "method", "params", "result", "error")
	paramsNames   = jsonread.NewNames("_meta", "cursor", "uri", "name", "arguments", "ref", "argument", "context", "level",
		"protocolVersion", "capabilities", "requestId", "notifications", "inputResponses", "requestState", "taskId")
	metaNames = jsonread.NewNames("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
		"io.modelcontextprotocol/logLevel", "progressToken", "traceparent", "tracestate")
	refNames      = jsonread.NewNames("type", "name", "uri")
	argumentNames = jsonread.NewNames("name", "value")
	contextNames  = jsonread.NewNames("arguments")
	filterNames   = jsonread.NewNames("toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions")
)

// knownStrings are the string values most requests repeat (jsonrpc,
// methods, versions, ref types, log levels): reader returns these instead
// of allocating a copy.
var knownStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"2.0", VersionModern,
		"initialize", "ping", "server/discover", "subscriptions/listen", "logging/setLevel",
		"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "tools/list", "tools/call", "completion/complete",
		"notifications/initialized", "notifications/cancelled", "ref/prompt", "ref/resource"} {
		m[s] = s
	}
	for _, s := range legacyVersions {
		m[s] = s
	}
	for _, s := range logLevels {
		m[s] = s
	}
	return m
}()

// str returns s decoded, interned when it is a known string.
func str(s jsonread.Str) string {
	if !s.Escaped() && len(s.Raw) >= 2 {
		if k, ok := knownStrings[string(s.Raw[1:len(s.Raw)-1])]; ok {
			return k
		}
	}
	return s.String()
}

// reader reads one message.
type reader struct {
	*jsonread.Decoder
}

// decodeMessage decodes b (trimmed, starting with '{'). The Message owns a
// copy of b: its raw members point into the copy.
func decodeMessage(b []byte) (*Message, *Error) {
	d := reader{jsonread.NewDecoder(bytes.Clone(b))}
	m := &Message{}
	var (
		version            jsonread.Str
		method             jsonread.Str
		rawID, rawParams   []byte
		hasMethod          bool
		paramsErr          error
		result, errorValue []byte
	)
	d.Object("", envelopeNames, func(i int, _ []byte) {
		switch i {
		case 0:
			version = d.String("jsonrpc")
		case 1:
			rawID = d.Skip()
		case 2:
			method = d.String("method")
			hasMethod = method.Present()
		case 3:
			if d.Peek() != '{' {
				rawParams = d.Skip()
				return
			}
			outer := d.TakeRefusal()
			start := d.Offset() // at the '{' Peek saw
			d.params(&m.p)
			rawParams = d.Bytes()[start:d.Offset()]
			paramsErr = d.TakeRefusal()
			if outer != nil {
				d.Refuse(outer)
			}
		case 4:
			result = d.Skip()
		case 5:
			errorValue = d.Skip()
		default:
			d.Skip()
		}
	})
	if d.End(); d.SyntaxErr() != nil {
		return nil, errParse
	}
	id, idErr := checkID(rawID)
	if err := d.TakeRefusal(); err != nil {
		if me, ok := err.(*jsonread.MemberError); ok {
			if me.Name == "id" && me.Known == "" {
				id = nil // which id is meant cannot be told
			}
			return &Message{ID: id, hadID: true}, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + err.Error() + ".", Envelope: true}
		}
		// Valid JSON of the wrong shape, such as a numeric method.
		return &Message{ID: id, hadID: true}, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: malformed JSON-RPC message.", Envelope: true}
	}
	// A message whose id is present but unreadable is answered without id.
	var name string
	if hasMethod {
		name = str(method)
	}
	partial := func() *Message { return &Message{ID: id, hadID: rawID != nil, Method: name} }
	if !version.Is("2.0") {
		return partial(), &Error{Code: CodeInvalidRequest, Message: `Invalid Request: jsonrpc must be "2.0".`, Envelope: true}
	}
	if !hasMethod {
		if rawID != nil && (result != nil || errorValue != nil) {
			return &Message{ID: id, IsResponse: true, result: result, rpcErr: errorValue}, nil
		}
		return partial(), &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is missing.", Envelope: true}
	}
	if idErr != nil {
		return partial(), idErr
	}
	if method.Empty() {
		return partial(), &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is empty.", Envelope: true}
	}
	m.ID, m.Method, m.hadID = id, name, id != nil
	if rawParams != nil && string(rawParams) != "null" {
		if rawParams[0] != '{' {
			m.p = params{}
			return m, &Error{Code: CodeInvalidParams, Message: "Invalid params: params must be an object.", Envelope: true}
		}
		m.Params = rawParams
		if _, ok := paramsErr.(*jsonread.MemberError); ok {
			// Ambiguous whatever the method reads: refused at once.
			m.p = params{}
			return m, &Error{Code: CodeInvalidParams, Message: "Invalid params: " + paramsErr.Error() + "."}
		}
		m.pErr = paramsErr // a wrong type matters only to a method that reads the member
	}
	m.modern = m.p.Meta != nil && m.p.Meta.ProtocolVersion != nil
	return m, nil
}

var errParse = &Error{Code: CodeParseError, Message: "Parse error: invalid JSON.", Envelope: true}

// params reads the params object.
func (d reader) params(p *params) {
	d.Object("params", paramsNames, func(i int, _ []byte) {
		switch i {
		case 0:
			if d.Null() {
				p.Meta = nil
				return
			}
			p.Meta = &requestMeta{}
			d.meta(p.Meta)
		case 1:
			p.Cursor = d.optString("cursor")
		case 2:
			p.URI = d.text("uri", p.URI)
		case 3:
			p.Name = d.text("name", p.Name)
		case 4:
			p.Arguments = d.topLevel("arguments")
		case 5:
			if d.Null() {
				p.Ref = nil
				return
			}
			p.Ref = &refParam{}
			d.Object("ref", refNames, func(i int, _ []byte) {
				switch i {
				case 0:
					p.Ref.Type = d.text("ref.type", p.Ref.Type)
				case 1:
					p.Ref.Name = d.text("ref.name", p.Ref.Name)
				case 2:
					p.Ref.URI = d.text("ref.uri", p.Ref.URI)
				default:
					d.Skip()
				}
			})
		case 6:
			if d.Null() {
				p.Argument = nil
				return
			}
			p.Argument = &argumentParam{}
			d.Object("argument", argumentNames, func(i int, _ []byte) {
				switch i {
				case 0:
					p.Argument.Name = d.optString("argument.name")
				case 1:
					p.Argument.Value = d.optString("argument.value")
				default:
					d.Skip()
				}
			})
		case 7:
			if d.Null() {
				p.Context = nil
				return
			}
			p.Context = &contextParam{}
			d.Object("context", contextNames, func(i int, _ []byte) {
				if i < 0 {
					d.Skip()
					return
				}
				p.Context.Arguments = d.strings("context.arguments")
			})
		case 8:
			p.Level = d.optString("level")
		case 9:
			p.Version = d.optString("protocolVersion")
		case 10:
			p.Caps = d.Skip()
		case 11:
			p.RequestID = d.Skip()
		case 12:
			if d.Null() {
				p.Notifications = nil
				return
			}
			p.Notifications = &listenFilter{}
			d.filter(p.Notifications)
		case 13:
			p.InputResponses = d.topLevel("inputResponses")
		case 14:
			p.RequestState = d.optString("requestState")
		case 15:
			p.TaskID = d.text("taskId", p.TaskID)
		default:
			d.Skip()
		}
	})
}

// meta reads params._meta.
func (d reader) meta(mt *requestMeta) {
	d.Object("_meta", metaNames, func(i int, _ []byte) {
		switch i {
		case 0:
			mt.ProtocolVersion = d.optString("_meta.io.modelcontextprotocol/protocolVersion")
		case 1:
			mt.ClientCapabilities = d.Skip()
		case 2:
			mt.LogLevel = d.optString("_meta.io.modelcontextprotocol/logLevel")
		case 3:
			mt.ProgressToken = d.Skip()
		case 4:
			mt.TraceParent = d.optString("_meta.traceparent")
		case 5:
			mt.TraceState = d.optString("_meta.tracestate")
		default:
			d.Skip()
		}
	})
}

// filter reads subscriptions/listen's params.notifications.
func (d reader) filter(f *listenFilter) {
	d.Object("notifications", filterNames, func(i int, _ []byte) {
		switch i {
		case 0:
			f.ToolsListChanged = d.flag("notifications.toolsListChanged", f.ToolsListChanged)
		case 1:
			f.PromptsListChanged = d.flag("notifications.promptsListChanged", f.PromptsListChanged)
		case 2:
			f.ResourcesListChanged = d.flag("notifications.resourcesListChanged", f.ResourcesListChanged)
		case 3:
			if d.Null() {
				f.ResourceSubscriptions = nil
				return
			}
			f.ResourceSubscriptions = []string{}
			d.Array("notifications.resourceSubscriptions", func() {
				s := d.String("notifications.resourceSubscriptions")
				f.ResourceSubscriptions = append(f.ResourceSubscriptions, s.String())
			})
		default:
			d.Skip()
		}
	})
}

// text reads a string member; null leaves old.
func (d reader) text(path, old string) string {
	if s := d.String(path); s.Present() {
		return str(s)
	}
	return old
}

// optString reads a *string member: null is nil; a value of another
// type is refused and, as in encoding/json, leaves a pointer to "".
func (d reader) optString(path string) *string {
	if d.Null() {
		return nil
	}
	v := str(d.String(path))
	return &v
}

// flag reads a bool member; null leaves old.
func (d reader) flag(path string, old bool) bool {
	if v, ok := d.Bool(path); ok {
		return v
	}
	return old
}

// strings reads an object of strings (prompt arguments): null is nil.
func (d reader) strings(path string) map[string]string {
	if d.Null() {
		return nil
	}
	out := map[string]string{}
	d.Map(path, func(key []byte) {
		s := d.String(path + "." + string(key))
		if s.Present() {
			out[string(key)] = s.String()
		} else if _, ok := out[string(key)]; !ok {
			out[string(key)] = ""
		}
	})
	return out
}

// topLevel reads a value kept raw whose top-level members the host reads
// (tool and prompt arguments, input responses): a repeated name at the
// top is refused, the values below are opaque.
func (d reader) topLevel(path string) []byte {
	if d.Peek() != '{' {
		return d.Skip()
	}
	start := d.Offset() // at the '{' Peek saw
	d.Map(path, func([]byte) { d.Skip() })
	if d.SyntaxErr() != nil {
		return nil
	}
	return d.Bytes()[start:d.Offset()]
}

// stringMap decodes prompt arguments: an object of strings, strictly.
func stringMap(raw []byte) (map[string]string, error) {
	d := reader{jsonread.NewDecoder(raw)}
	if d.Peek() != '{' {
		return nil, &jsonread.TypeError{Field: "arguments", Want: "object"}
	}
	m := d.strings("arguments")
	if err := d.End(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkID validates a raw id: absent, a string or an integer. null and
// other types are invalid for requests.
func checkID(raw []byte) ([]byte, *Error) {
	if raw == nil {
		return nil, nil
	}
	switch c := raw[0]; {
	case c == '"':
		return raw, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer.", Envelope: true}
		}
		return raw, nil
	case c == 'n':
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must not be null.", Envelope: true}
	}
	return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer.", Envelope: true}
}
