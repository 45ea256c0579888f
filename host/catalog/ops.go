package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
	"github.com/yosida95/uritemplate/v3"
)

// MaxCompletionValues is MCP's cap on completion values.
const MaxCompletionValues = 100

// ReadResource validates uri, routes it to the provider owning its scheme
// (telling it which of its templates matched, if any) and validates the
// contents it returns. A URI nobody owns, or that the owner does not have,
// is KindResourceNotFound; it never yields empty contents.
func (s *Set) ReadResource(ctx context.Context, r Request, uri string) (*ReadResult, error) {
	ctx, span := tracer.Start(ctx, "catalog.read")
	defer span.End()
	p := r.Principal
	scheme, err := ValidateURI(uri)
	if err != nil {
		return nil, err
	}
	// Hidden answers exactly like missing, in bytes and as far as can be
	// in time: the view is taken before the scheme is looked up, and what
	// it hides by plugin, scheme or URI is refused before any template is
	// matched (matching costs microseconds), so a hidden scheme costs what
	// an unserved one does (docs/performance.md).
	v := s.view(p)
	pr, ok := s.schemes[scheme]
	if !ok || !v.Resource(pr.name, scheme, "", uri) {
		return nil, notFound(uri)
	}
	// One template match serves both the policy and the provider.
	t, vals := pr.matchTemplate(uri)
	req := abi.ReadResourceRequest{URI: uri, Principal: p}
	if t != nil {
		req.Template = t.raw
		req.Variables = make(map[string]string, len(vals))
		for k, x := range vals {
			req.Variables[k] = x.String()
		}
		if !v.Resource(pr.name, scheme, req.Template, uri) {
			return nil, notFound(uri)
		}
	}
	digest := lazyDigest(p, abi.OpReadResource, uri, nil)
	if req.Input, err = s.prepareInput(r.Input, pr, digest); err != nil {
		return nil, err
	}
	body, _ := json.Marshal(req)
	out, ir, err := s.call(ctx, pr, r, abi.OpReadResource, body, uri)
	if ir != nil {
		return nil, s.inputRequired(r.Input, pr, abi.OpReadResource, digest, ir)
	}
	if err != nil {
		return nil, err
	}
	var res readResult
	if err := newDec(out).readResult(&res); err != nil {
		return nil, s.badOutput(pr, abi.OpReadResource, err)
	}
	if len(res.Contents) == 0 {
		return nil, notFound(uri)
	}
	result := &ReadResult{
		Contents: make([]json.RawMessage, len(res.Contents)),
		Private:  s.private(),
		TTL:      s.opts.ReadTTL,
		Plugin:   pr.name,
	}
	if res.TTLMs != nil && *res.TTLMs >= 0 {
		result.TTL = time.Duration(*res.TTLMs) * time.Millisecond
	}
	total := 0
	for i := range res.Contents {
		n, err := pr.checkContents(&res.Contents[i], uri)
		if err != nil {
			return nil, s.badOutput(pr, abi.OpReadResource, err)
		}
		if total += n; total > s.opts.MaxContentBytes {
			return nil, s.badOutput(pr, abi.OpReadResource, outputErr("contents exceed %d bytes", s.opts.MaxContentBytes))
		}
	}
	// One buffer holds every item: the provider's bytes plus the keys.
	buf := make([]byte, 0, len(out)+32*len(res.Contents))
	for i := range res.Contents {
		start := len(buf)
		buf = res.Contents[i].appendTo(buf)
		result.Contents[i] = buf[start:len(buf):len(buf)]
	}
	return result, nil
}

// GetPrompt checks the prompt exists and its required arguments are
// present, asks its owner, and validates the messages. The result is a
// GetPromptResult object without resultType.
func (s *Set) GetPrompt(ctx context.Context, r Request, name string, args map[string]string) (json.RawMessage, error) {
	ctx, span := tracer.Start(ctx, "catalog.prompt")
	defer span.End()
	p := r.Principal
	ref, ok := s.prompts[name]
	if v := s.view(p); !ok || !v.Prompt(ref.owner.name, name) {
		return nil, &Error{Kind: KindUnknownName, Message: "unknown prompt", Name: name}
	}
	for _, a := range ref.prompt.Arguments {
		if a.Required && args[a.Name] == "" {
			return nil, &Error{Kind: KindInvalidParams, Message: "missing required argument " + a.Name + " of prompt " + name, Name: a.Name}
		}
	}
	for k, v := range args {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, invalidParams("prompt arguments must be UTF-8")
		}
	}
	pr := ref.owner
	digest := lazyDigest(p, abi.OpGetPrompt, name, func() json.RawMessage {
		argsJSON, _ := json.Marshal(args)
		return argsJSON
	})
	input, err := s.prepareInput(r.Input, pr, digest)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(abi.GetPromptRequest{Name: name, Arguments: args, Principal: p, Input: input})
	out, ir, err := s.call(ctx, pr, r, abi.OpGetPrompt, body, "")
	if ir != nil {
		return nil, s.inputRequired(r.Input, pr, abi.OpGetPrompt, digest, ir)
	}
	if err != nil {
		return nil, err
	}
	var res getPromptResult
	if err := newDec(out).getPromptResult(&res); err != nil {
		return nil, s.badOutput(pr, abi.OpGetPrompt, err)
	}
	if res.Messages == nil {
		return nil, s.badOutput(pr, abi.OpGetPrompt, outputErr("prompt result has no messages"))
	}
	for i := range res.Messages {
		m := &res.Messages[i]
		if !m.Role.Is("user") && !m.Role.Is("assistant") {
			return nil, s.badOutput(pr, abi.OpGetPrompt, outputErr("message role %q", m.Role.String()))
		}
		if err := pr.checkBlock(&m.Content); err != nil {
			return nil, s.badOutput(pr, abi.OpGetPrompt, err)
		}
	}
	return res.appendTo(make([]byte, 0, len(out)+64)), nil
}

// CallTool asks the tool's owner and validates the CallToolResult. args
// must be a JSON object or empty. Tool failures come back as results with
// isError, not as errors.
func (s *Set) CallTool(ctx context.Context, r Request, name string, args json.RawMessage) (json.RawMessage, error) {
	ctx, span := tracer.Start(ctx, "catalog.tool")
	defer span.End()
	p := r.Principal
	pr, ok := s.tools[name]
	if v := s.view(p); !ok || !v.Tool(pr.name, name) {
		return nil, &Error{Kind: KindUnknownName, Message: "unknown tool", Name: name}
	}
	if t := bytes.TrimSpace(args); len(t) > 0 && !bytes.Equal(t, []byte("null")) && t[0] != '{' {
		return nil, &Error{Kind: KindInvalidParams, Message: "tool arguments must be a JSON object", Name: name}
	}
	digest := lazyDigest(p, abi.OpCallTool, name, func() json.RawMessage { return args })
	input, err := s.prepareInput(r.Input, pr, digest)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(abi.CallToolRequest{Name: name, Arguments: args, Principal: p, Input: input})
	out, ir, err := s.call(ctx, pr, r, abi.OpCallTool, body, "")
	if ir != nil {
		return nil, s.inputRequired(r.Input, pr, abi.OpCallTool, digest, ir)
	}
	if err != nil {
		return nil, err
	}
	var res callToolResult
	if err := newDec(out).callToolResult(&res); err != nil {
		return nil, s.badOutput(pr, abi.OpCallTool, err)
	}
	for i := range res.Content {
		if err := pr.checkBlock(&res.Content[i]); err != nil {
			return nil, s.badOutput(pr, abi.OpCallTool, err)
		}
	}
	if len(res.StructuredContent) > 0 && !isObject(res.StructuredContent) {
		return nil, s.badOutput(pr, abi.OpCallTool, outputErr("structuredContent is not an object"))
	}
	return res.appendTo(make([]byte, 0, len(out)+64)), nil
}

// Complete routes a completion to the owner of the prompt (ref/prompt) or
// template (ref/resource, ref.URI is the template). An argument the owner
// did not declare completable gets no values. At most 100 values are
// returned; total and hasMore stay honest when more exist.
func (s *Set) Complete(ctx context.Context, r Request, ref abi.CompleteRef, arg abi.CompleteArgument, ctxArgs map[string]string) (*abi.Completion, error) {
	ctx, span := tracer.Start(ctx, "catalog.complete")
	defer span.End()
	p := r.Principal
	var (
		pr       *provider
		complete []string
		declared []string
		tmpl     *template
		v        = s.view(p)
	)
	switch ref.Type {
	case "ref/prompt":
		pref, ok := s.prompts[ref.Name]
		if !ok || !v.Prompt(pref.owner.name, ref.Name) {
			return nil, &Error{Kind: KindUnknownName, Message: "unknown prompt", Name: ref.Name}
		}
		pr, complete = pref.owner, pref.prompt.Complete
		for _, a := range pref.prompt.Arguments {
			declared = append(declared, a.Name)
		}
	case "ref/resource":
		t, ok := s.templates[ref.URI]
		if !ok || !templateVisible(v, t) {
			return nil, &Error{Kind: KindUnknownName, Message: "unknown resource template", Name: ref.URI}
		}
		pr, complete, declared, tmpl = t.owner, t.complete, t.vars, t
	default:
		return nil, invalidParams("unknown completion reference type %q", ref.Type)
	}
	if !slices.Contains(declared, arg.Name) {
		return nil, &Error{Kind: KindInvalidParams, Message: "no argument " + arg.Name + " to complete", Name: arg.Name}
	}
	if !slices.Contains(complete, arg.Name) {
		return &abi.Completion{Values: []string{}}, nil
	}
	body, _ := json.Marshal(abi.CompleteRequest{Ref: ref, Argument: arg, Arguments: ctxArgs, Principal: p})
	out, _, err := s.call(ctx, pr, r, abi.OpComplete, body, "")
	if err != nil {
		return nil, err
	}
	var res abi.CompleteResult
	if err := newDec(out).completeResult(&res); err != nil {
		return nil, s.badOutput(pr, abi.OpComplete, err)
	}
	c := res.Completion
	if c.Values == nil {
		c.Values = []string{}
	}
	n := len(c.Values)
	if c.Total != nil && *c.Total < n {
		return nil, s.badOutput(pr, abi.OpComplete, outputErr("completion total %d is less than its %d values", *c.Total, n))
	}
	if tmpl != nil && s.opts.Policy != nil {
		filterCompletion(&c, v, tmpl, arg.Name, ctxArgs)
		n = len(c.Values)
	}
	if n > MaxCompletionValues {
		c.Values = c.Values[:MaxCompletionValues]
		c.HasMore = true
		if c.Total == nil {
			c.Total = &n
		}
	}
	if c.Total != nil && *c.Total > len(c.Values) {
		c.HasMore = true
	}
	return &c, nil
}

func notFound(uri string) *Error {
	return &Error{Kind: KindResourceNotFound, Message: "Resource not found", URI: uri}
}

// call asks pr for op and sorts its Result: the response payload, a
// request for client input (only read, prompt and tool calls may ask), or
// an error: the provider's declared failure mapped for the client, its own
// failure, or output the Set refuses (reported back to the provider).
// uri is the URI the request named, if any.
func (s *Set) call(ctx context.Context, pr *provider, r Request, op abi.Op, body []byte, uri string) ([]byte, *abi.InputRequired, error) {
	c := Call{Op: op, Request: body, Principal: r.Principal, Sink: r.Sink, TaskDeadline: r.TaskDeadline}
	if r.Input != nil {
		c.Capabilities = r.Input.Capabilities
	}
	res, err := pr.Call(ctx, c)
	if err != nil {
		return nil, nil, &Error{Kind: KindInternal, Message: "the plugin failed", Plugin: pr.name, URI: uri, Err: err}
	}
	switch res.Status {
	case abi.StatusOK:
		return res.Body, nil, nil
	case abi.StatusError:
		ae, err := decodeError(res.Body)
		if err != nil {
			return nil, nil, s.badOutput(pr, op, err)
		}
		return nil, nil, declaredErr(pr, ae, uri)
	case abi.StatusInputRequired:
		if op != abi.OpReadResource && op != abi.OpGetPrompt && op != abi.OpCallTool {
			return nil, nil, s.badOutput(pr, op, outputErr("%s may not ask for client input", op))
		}
		var ir abi.InputRequired
		if err := jsonread.Unmarshal(res.Body, &ir); err != nil {
			return nil, nil, s.badOutput(pr, op, outputErr("input-required response is not a well-formed InputRequired object: %v", err))
		} else if len(ir.InputRequests) == 0 && ir.State == "" {
			return nil, nil, s.badOutput(pr, op, outputErr("input-required response is not a well-formed InputRequired object: neither inputRequests nor state"))
		}
		return nil, &ir, nil
	}
	return nil, nil, s.badOutput(pr, op, outputErr("unknown status %d", int32(res.Status)))
}

// decodeError decodes the abi.Error of a StatusError result.
func decodeError(body []byte) (*abi.Error, error) {
	var ae abi.Error
	if err := jsonread.Unmarshal(body, &ae); err != nil {
		return nil, outputErr("error response is not a well-formed error object: %v", err)
	}
	if ae.Code == "" {
		return nil, outputErr("error response is not a well-formed error object: no code")
	}
	return &ae, nil
}

// declaredErr maps a failure the provider declared: not found and invalid
// params keep their meaning; any other code is the provider's failure.
func declaredErr(pr *provider, ae *abi.Error, uri string) error {
	switch ae.Code {
	case abi.CodeNotFound:
		if uri != "" {
			return notFound(uri)
		}
		return &Error{Kind: KindInvalidParams, Message: clientMessage(ae.Message, "not found"), URI: uri}
	case abi.CodeInvalidParams:
		return &Error{Kind: KindInvalidParams, Message: clientMessage(ae.Message, "invalid params"), URI: uri}
	}
	return &Error{Kind: KindInternal, Message: "the plugin failed", Plugin: pr.name, URI: uri, Err: ae}
}

func (s *Set) badOutput(pr *provider, op abi.Op, err error) error {
	pr.RejectOutput(op, err)
	return &Error{Kind: KindInternal, Message: "the plugin returned invalid output", Plugin: pr.name, Err: err}
}

// clientMessage bounds a provider's message before a client sees it.
func clientMessage(msg, fallback string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" || !utf8.ValidString(msg) {
		return fallback
	}
	if len(msg) > 200 {
		msg = msg[:200]
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
	}
	return msg
}

// filterCompletion drops the values of template t's variable name that
// would lead to a URI v may not see: the template is expanded with the
// context arguments and the value. total then counts only what is left
// when it counted exactly the values given; when it counted more, the
// hidden share of the rest is unknown, so total is dropped (hasMore stays).
func filterCompletion(c *abi.Completion, v View, t *template, name string, ctxArgs map[string]string) {
	vals := uritemplate.Values{}
	for k, x := range ctxArgs {
		if slices.Contains(t.vars, k) {
			vals.Set(k, uritemplate.String(x))
		}
	}
	kept := c.Values[:0:0]
	for _, x := range c.Values {
		vals.Set(name, uritemplate.String(x))
		uri, err := t.tmpl.Expand(vals)
		if err == nil && uriVisible(v, t.owner, uri) {
			kept = append(kept, x)
		}
	}
	removed := len(c.Values) - len(kept)
	c.Values = kept
	if removed == 0 || c.Total == nil {
		return
	}
	if *c.Total > len(kept)+removed {
		c.Total, c.HasMore = nil, true
		return
	}
	total := len(kept)
	c.Total = &total
}
