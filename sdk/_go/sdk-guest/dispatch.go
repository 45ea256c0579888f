package corral

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// MaxCompletions is the most values a completion answer holds (MCP's limit).
const MaxCompletions = 100

// defaultListLimit is the page size used when a list request names none.
const defaultListLimit = 100

// Handle runs one operation: req is its JSON request payload, the result is
// the status and the response payload (the operation's result, or an
// abi.Error). The returned bytes are only valid until the next call to
// Handle, which reuses them. The ABI glue calls Handle for corral_call;
// tests call it directly.
func (p *Plugin) Handle(op abi.Op, req []byte) (abi.Status, []byte) {
	if err := p.seal(); err != nil {
		return p.errorResponse(&abi.Error{Code: abi.CodeInternal, Message: err.Error()})
	}
	v, err := p.dispatch(op, req)
	if ir := asInputRequired(err); ir != nil {
		out, eerr := p.enc.encode(ir)
		if eerr != nil {
			return p.errorResponse(&abi.Error{Code: abi.CodeInternal, Message: "encode input request: " + eerr.Error()})
		}
		return abi.StatusInputRequired, out
	}
	if err != nil {
		return p.errorResponse(toABIError(err))
	}
	if raw, ok := v.([]byte); ok {
		return abi.StatusOK, raw
	}
	out, err := p.enc.encode(v)
	if err != nil {
		return p.errorResponse(&abi.Error{Code: abi.CodeInternal, Message: "encode response: " + err.Error()})
	}
	return abi.StatusOK, out
}

func (p *Plugin) errorResponse(e *abi.Error) (abi.Status, []byte) {
	out, err := p.enc.encode(e)
	if err != nil {
		out = []byte(`{"code":"internal","message":"corral: cannot encode error"}`)
	}
	return abi.StatusError, out
}

// dispatch decodes req, runs the handler for op and returns the value to
// encode (or pre-encoded bytes). A panicking handler is reported as an
// internal error rather than trapping the instance.
func (p *Plugin) dispatch(op abi.Op, req []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, Internal(fmt.Sprintf("panic in %s handler: %v", op, r))
		}
	}()
	switch op {
	case abi.OpDescribe:
		return p.manifest, nil
	case abi.OpListResources:
		return p.list(req)
	case abi.OpReadResource:
		return p.read(req)
	case abi.OpGetPrompt:
		return p.getPrompt(req)
	case abi.OpCallTool:
		return p.callTool(req)
	case abi.OpComplete:
		return p.complete(req)
	}
	return nil, InvalidParams(fmt.Sprintf("unknown operation %d", uint32(op)))
}

func decode(req []byte, v any) error {
	if err := json.Unmarshal(req, v); err != nil {
		return InvalidParams("malformed request: " + err.Error())
	}
	return nil
}

// listResult has the wire shape of abi.ListResourcesResult but holds typed
// resources, so they are encoded once.
type listResult struct {
	Resources  []abi.Resource `json:"resources"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

func (p *Plugin) list(raw []byte) (any, error) {
	var req abi.ListResourcesRequest
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	if p.lister == nil {
		return listResult{Resources: []abi.Resource{}}, nil
	}
	if req.Limit <= 0 {
		req.Limit = defaultListLimit
	}
	res, next, err := p.lister(&req)
	if err != nil {
		return nil, err
	}
	if len(res) > req.Limit {
		return nil, Internal(fmt.Sprintf("lister returned %d resources, over the limit of %d", len(res), req.Limit))
	}
	for _, r := range res {
		if !p.owns(r.URI) {
			return nil, Internal(fmt.Sprintf("lister returned %q, outside the plugin's schemes", r.URI))
		}
	}
	if res == nil {
		res = []abi.Resource{}
	}
	return listResult{Resources: res, NextCursor: next}, nil
}

// owns reports whether uri uses one of the plugin's schemes.
func (p *Plugin) owns(uri string) bool {
	colon := strings.IndexByte(uri, ':')
	return colon > 0 && slices.Contains(p.m.Schemes, strings.ToLower(uri[:colon]))
}

func (p *Plugin) read(raw []byte) (any, error) {
	var req abi.ReadResourceRequest
	if err := decodeFast(raw, &req); err != nil {
		return nil, err
	}
	read := p.resources[req.URI]
	if read == nil && req.Template != "" {
		if t := p.templates[req.Template]; t != nil {
			read = t.read
		}
	}
	if read == nil {
		read = p.reader
	}
	if read == nil {
		return nil, NotFound("resource not found: " + req.URI)
	}
	res, err := read(&req)
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Contents) == 0 {
		return nil, Internal("read handler returned no contents for " + req.URI)
	}
	return p.enc.readResult(res), nil
}

func (p *Plugin) getPrompt(raw []byte) (any, error) {
	var req abi.GetPromptRequest
	if err := decodeFast(raw, &req); err != nil {
		return nil, err
	}
	e := p.prompts[req.Name]
	if e == nil {
		return nil, NotFound(fmt.Sprintf("prompt %q not found", req.Name))
	}
	for _, name := range e.required {
		if req.Arguments[name] == "" {
			return nil, InvalidParams(fmt.Sprintf("prompt %q: missing required argument %q", req.Name, name))
		}
	}
	res, err := e.get(&req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &abi.GetPromptResult{}
	}
	if res.Messages == nil {
		res.Messages = []json.RawMessage{}
	}
	return p.enc.promptResult(res), nil
}

func (p *Plugin) callTool(raw []byte) (any, error) {
	var req abi.CallToolRequest
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	e := p.tools[req.Name]
	if e == nil {
		return nil, NotFound(fmt.Sprintf("tool %q not found", req.Name))
	}
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || string(args) == "null" {
		req.Arguments = json.RawMessage(`{}`)
	} else if args[0] != '{' {
		return nil, InvalidParams(fmt.Sprintf("tool %q: arguments must be a JSON object", req.Name))
	}
	if len(e.required) > 0 {
		var present map[string]json.RawMessage
		if err := json.Unmarshal(req.Arguments, &present); err != nil {
			return nil, InvalidParams(fmt.Sprintf("tool %q: malformed arguments: %v", req.Name, err))
		}
		for _, name := range e.required {
			if _, ok := present[name]; !ok {
				return ToolError(fmt.Sprintf("missing required argument %q", name)), nil
			}
		}
	}
	res, err := e.call(&req)
	if asInputRequired(err) != nil {
		return nil, err
	}
	if err != nil {
		return ToolError(message(err)), nil
	}
	if res == nil {
		res = &abi.CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	return res, nil
}

func (p *Plugin) complete(raw []byte) (any, error) {
	var req abi.CompleteRequest
	if err := decodeFast(raw, &req); err != nil {
		return nil, err
	}
	var fn CompleteFunc
	var canFill []string
	switch req.Ref.Type {
	case "ref/prompt":
		e := p.prompts[req.Ref.Name]
		if e == nil {
			return nil, NotFound(fmt.Sprintf("prompt %q not found", req.Ref.Name))
		}
		fn, canFill = e.complete, e.canFill
	case "ref/resource":
		e := p.templates[req.Ref.URI]
		if e == nil {
			return nil, NotFound(fmt.Sprintf("template %q not found", req.Ref.URI))
		}
		fn, canFill = e.complete, e.canFill
	default:
		return nil, InvalidParams(fmt.Sprintf("unknown completion ref type %q", req.Ref.Type))
	}
	res := abi.CompleteResult{Completion: abi.Completion{Values: []string{}}}
	if fn == nil || !slices.Contains(canFill, req.Argument.Name) {
		total := 0
		res.Completion.Total = &total
		return res, nil
	}
	values, err := fn(&req)
	if err != nil {
		return nil, err
	}
	total := len(values)
	if len(values) > MaxCompletions {
		values = values[:MaxCompletions]
		res.Completion.HasMore = true
	}
	if values != nil {
		res.Completion.Values = values
	}
	res.Completion.Total = &total
	return p.enc.completeResult(&res.Completion), nil
}

// readResult assembles a read response around its raw contents without
// re-encoding them; the host validates every content it receives.
func (e *encoder) readResult(res *abi.ReadResourceResult) []byte {
	b := append(e.raw[:0], `{"contents":[`...)
	for i, c := range res.Contents {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	b = append(b, ']')
	if res.TTLMs != nil {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, *res.TTLMs, 10)
	}
	b = append(b, '}')
	e.raw = b
	return b
}

// encoder encodes responses into one reused buffer: the host copies a
// response as soon as it is handed over, so the next call may overwrite it.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
	raw []byte // hand-assembled responses
}

func (e *encoder) encode(v any) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	b := e.buf.Bytes()
	return b[:len(b)-1], nil // Encode appends a newline
}
