// Package catalogtest provides native, in-memory catalog providers for
// tests: a Provider built from a manifest and Go handler funcs, and the
// fixtures of the official MCP conformance suite.
package catalogtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// Provider is a native catalog.Provider. Each handler receives the decoded
// request and returns a value that is JSON-encoded as the response; a nil
// handler answers abi.CodeNotFound. A handler's *abi.Error is answered as
// abi.StatusError and its *abi.InputRequired as abi.StatusInputRequired,
// as a Wasm guest would; any other error is the provider's own failure.
type Provider struct {
	M        abi.Manifest
	List     func(ctx context.Context, req abi.ListResourcesRequest) (*abi.ListResourcesResult, error)
	Read     func(ctx context.Context, req abi.ReadResourceRequest) (any, error)
	Prompt   func(ctx context.Context, req abi.GetPromptRequest) (any, error)
	Tool     func(ctx context.Context, req abi.CallToolRequest) (any, error)
	Complete func(ctx context.Context, req abi.CompleteRequest) (*abi.CompleteResult, error)
	// Raw, when set, answers every call with these bytes (to test
	// validation of malformed output).
	Raw []byte

	calls    atomic.Int64
	rejected atomic.Int64
}

// Manifest implements catalog.Provider.
func (p *Provider) Manifest() *abi.Manifest { return &p.M }

// Digest implements catalog.Provider: a native provider has no file.
func (p *Provider) Digest() string { return "" }

// RejectOutput implements catalog.Provider by counting the rejections.
func (p *Provider) RejectOutput(abi.Op, error) { p.rejected.Add(1) }

// Calls returns how many calls the provider has served.
func (p *Provider) Calls() int64 { return p.calls.Load() }

// Rejected returns how many of its results the Set refused as invalid.
func (p *Provider) Rejected() int64 { return p.rejected.Load() }

// Call implements catalog.Provider.
func (p *Provider) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	p.calls.Add(1)
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return catalog.Result{}, err
	}
	if p.Raw != nil {
		return catalog.Result{Status: abi.StatusOK, Body: p.Raw}, nil
	}
	out, err := p.serve(ctx, c.Op, c.Request)
	if err != nil {
		return declared(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return catalog.Result{}, fmt.Errorf("catalogtest: %w", err)
	}
	return catalog.Result{Status: abi.StatusOK, Body: b}, nil
}

// declared answers a handler's error: its *abi.Error or *abi.InputRequired
// as a guest would, anything else as the provider's own failure.
func declared(err error) (catalog.Result, error) {
	var (
		ae *abi.Error
		ir *abi.InputRequired
	)
	switch {
	case errors.As(err, &ae):
		b, _ := json.Marshal(ae)
		return catalog.Result{Status: abi.StatusError, Body: b}, nil
	case errors.As(err, &ir):
		b, _ := json.Marshal(ir)
		return catalog.Result{Status: abi.StatusInputRequired, Body: b}, nil
	}
	return catalog.Result{}, err
}

// serve decodes req for op and runs its handler.
func (p *Provider) serve(ctx context.Context, op abi.Op, req []byte) (any, error) {
	var (
		out any
		err error
	)
	switch op {
	case abi.OpDescribe:
		out = &p.M
	case abi.OpListResources:
		var r abi.ListResourcesRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("catalogtest: %w", err)
		}
		if p.List == nil {
			out = &abi.ListResourcesResult{Resources: []json.RawMessage{}}
		} else {
			out, err = p.List(ctx, r)
		}
	case abi.OpReadResource:
		var r abi.ReadResourceRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("catalogtest: %w", err)
		}
		out, err = call(p.Read, ctx, r)
	case abi.OpGetPrompt:
		var r abi.GetPromptRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("catalogtest: %w", err)
		}
		out, err = call(p.Prompt, ctx, r)
	case abi.OpCallTool:
		var r abi.CallToolRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("catalogtest: %w", err)
		}
		out, err = call(p.Tool, ctx, r)
	case abi.OpComplete:
		var r abi.CompleteRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("catalogtest: %w", err)
		}
		if p.Complete == nil {
			out = &abi.CompleteResult{Completion: abi.Completion{Values: []string{}}}
		} else {
			out, err = p.Complete(ctx, r)
		}
	default:
		return nil, fmt.Errorf("catalogtest: unknown op %v", op)
	}
	return out, err
}

func call[R any](h func(context.Context, R) (any, error), ctx context.Context, r R) (any, error) {
	if h == nil {
		return nil, &abi.Error{Code: abi.CodeNotFound, Message: "not found"}
	}
	return h(ctx, r)
}

var _ catalog.Provider = (*Provider)(nil)
