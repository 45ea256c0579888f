package interop

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKSession adapts the official Go SDK's ClientSession to session.
type goSDKSession struct {
	cs *mcp.ClientSession
}

// connectGoSDK connects the official Go SDK client over transport, pinned
// to era, and closes the session when the test ends.
func connectGoSDK(t *testing.T, transport mcp.Transport, era string) *goSDKSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "corral-interop-go-sdk", Version: "1.8.0"}, nil)
	cs, err := c.Connect(testContext(t), transport, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("go-sdk connect (%s): %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &goSDKSession{cs: cs}
}

func (s *goSDKSession) ProtocolVersion() string { return s.cs.InitializeResult().ProtocolVersion }

func (s *goSDKSession) ResourcesPage(ctx context.Context, cursor string) (page, error) {
	r, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return page{}, err
	}
	p := page{next: r.NextCursor}
	for _, x := range r.Resources {
		p.items = append(p.items, x.URI)
	}
	return p, nil
}

func (s *goSDKSession) TemplatesPage(ctx context.Context, cursor string) (page, error) {
	r, err := s.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
	if err != nil {
		return page{}, err
	}
	p := page{next: r.NextCursor}
	for _, x := range r.ResourceTemplates {
		p.items = append(p.items, x.URITemplate)
	}
	return p, nil
}

func (s *goSDKSession) PromptsPage(ctx context.Context, cursor string) (page, error) {
	r, err := s.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
	if err != nil {
		return page{}, err
	}
	p := page{next: r.NextCursor}
	for _, x := range r.Prompts {
		p.items = append(p.items, x.Name)
	}
	return p, nil
}

func (s *goSDKSession) ToolsPage(ctx context.Context, cursor string) (page, error) {
	r, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		return page{}, err
	}
	p := page{next: r.NextCursor}
	for _, x := range r.Tools {
		p.items = append(p.items, x.Name)
	}
	return p, nil
}

func (s *goSDKSession) Read(ctx context.Context, uri string) ([]content, error) {
	r, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var out []content
	for _, c := range r.Contents {
		out = append(out, content{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob, IsBlob: c.Blob != nil})
	}
	return out, nil
}

func (s *goSDKSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	r, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range r.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, nil
}

func (s *goSDKSession) Complete(ctx context.Context, prompt, arg, value string) ([]string, error) {
	r, err := s.cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
		Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
	})
	if err != nil {
		return nil, err
	}
	if r.Completion.Values == nil {
		return nil, nil
	}
	return r.Completion.Values, nil
}

func (s *goSDKSession) CallTool(ctx context.Context, name string, args map[string]any) ([]string, bool, error) {
	r, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, false, err
	}
	var texts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, r.IsError, nil
}

func (s *goSDKSession) ReadError(ctx context.Context, uri string) (*rpcError, error) {
	r, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err == nil {
		return nil, fmt.Errorf("reading %s succeeded with %d contents; want a JSON-RPC error", uri, len(r.Contents))
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return nil, fmt.Errorf("reading %s: want a JSON-RPC error, got %T: %w", uri, err, err)
	}
	return &rpcError{Code: we.Code, Message: we.Message, Data: we.Data}, nil
}

func (s *goSDKSession) Close() error { return s.cs.Close() }

// TestGoSDK runs every check with the official Go SDK client, in both eras,
// over stdio and Streamable HTTP.
func TestGoSDK(t *testing.T) {
	tg := conformanceTarget(t)
	for _, era := range eras {
		t.Run("stdio/"+era, func(t *testing.T) {
			s := connectGoSDK(t, &mcp.CommandTransport{Command: tg.stdio()}, era)
			runChecks(t, s, era)
		})
		t.Run("http/"+era, func(t *testing.T) {
			url, ok := tg.httpURL[era]
			if !ok {
				t.Skipf("%v: %s", errSkipEra, era)
			}
			s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, era)
			runChecks(t, s, era)
		})
	}
}
