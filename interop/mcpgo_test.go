package interop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpGoSession adapts mark3labs/mcp-go's Client to session.
type mcpGoSession struct {
	c       *client.Client
	t       transport.Interface
	version string
	info    mcp.Implementation
}

// connectMcpGo starts tr, pins the client to era and initializes. Pinning
// matters: unpinned, mcp-go v1.2.1 accepts any successful server/discover
// without checking supportedVersions (peers.md, section 4).
func connectMcpGo(t *testing.T, tr transport.Interface, era string) *mcpGoSession {
	t.Helper()
	ctx := testContext(t)
	// A stdio server may still be compiling its plugins on a cold cache:
	// give discovery longer than mcp-go's 5 s default before it falls back.
	c := client.NewClient(tr, client.WithProtocolVersion(era), client.WithDiscoverTimeout(30*time.Second))
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	info := mcp.Implementation{Name: "corral-interop-mcp-go", Version: "1.2.1"}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = info
	req.Params.ProtocolVersion = era
	ir, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("mcp-go initialize (%s): %v", era, err)
	}
	return &mcpGoSession{c: c, t: tr, version: ir.ProtocolVersion, info: info}
}

func (s *mcpGoSession) ProtocolVersion() string { return s.version }

func (s *mcpGoSession) ResourcesPage(ctx context.Context, cursor string) (page, error) {
	req := mcp.ListResourcesRequest{}
	req.Params.Cursor = mcp.Cursor(cursor)
	r, err := s.c.ListResourcesByPage(ctx, req)
	if err != nil {
		return page{}, err
	}
	p := page{next: string(r.NextCursor)}
	for _, x := range r.Resources {
		p.items = append(p.items, x.URI)
	}
	return p, nil
}

func (s *mcpGoSession) TemplatesPage(ctx context.Context, cursor string) (page, error) {
	req := mcp.ListResourceTemplatesRequest{}
	req.Params.Cursor = mcp.Cursor(cursor)
	r, err := s.c.ListResourceTemplatesByPage(ctx, req)
	if err != nil {
		return page{}, err
	}
	p := page{next: string(r.NextCursor)}
	for _, x := range r.ResourceTemplates {
		if x.URITemplate != nil {
			p.items = append(p.items, x.URITemplate.Raw())
		}
	}
	return p, nil
}

func (s *mcpGoSession) PromptsPage(ctx context.Context, cursor string) (page, error) {
	req := mcp.ListPromptsRequest{}
	req.Params.Cursor = mcp.Cursor(cursor)
	r, err := s.c.ListPromptsByPage(ctx, req)
	if err != nil {
		return page{}, err
	}
	p := page{next: string(r.NextCursor)}
	for _, x := range r.Prompts {
		p.items = append(p.items, x.Name)
	}
	return p, nil
}

func (s *mcpGoSession) ToolsPage(ctx context.Context, cursor string) (page, error) {
	req := mcp.ListToolsRequest{}
	req.Params.Cursor = mcp.Cursor(cursor)
	r, err := s.c.ListToolsByPage(ctx, req)
	if err != nil {
		return page{}, err
	}
	p := page{next: string(r.NextCursor)}
	for _, x := range r.Tools {
		p.items = append(p.items, x.Name)
	}
	return p, nil
}

func (s *mcpGoSession) Read(ctx context.Context, uri string) ([]content, error) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	r, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []content
	for _, c := range r.Contents {
		if tc, ok := mcp.AsTextResourceContents(c); ok {
			out = append(out, content{URI: tc.URI, MIMEType: tc.MIMEType, Text: tc.Text})
			continue
		}
		if bc, ok := mcp.AsBlobResourceContents(c); ok {
			blob, err := base64.StdEncoding.DecodeString(bc.Blob)
			if err != nil {
				return nil, fmt.Errorf("%s: blob is not valid base64: %w", uri, err)
			}
			out = append(out, content{URI: bc.URI, MIMEType: bc.MIMEType, Blob: blob, IsBlob: true})
			continue
		}
		return nil, fmt.Errorf("%s: contents of unknown type %T", uri, c)
	}
	return out, nil
}

func (s *mcpGoSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	req := mcp.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	r, err := s.c.GetPrompt(ctx, req)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range r.Messages {
		if tc, ok := mcp.AsTextContent(m.Content); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, nil
}

func (s *mcpGoSession) Complete(ctx context.Context, prompt, arg, value string) ([]string, error) {
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: prompt}
	req.Params.Argument.Name = arg
	req.Params.Argument.Value = value
	r, err := s.c.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.Completion.Values, nil
}

func (s *mcpGoSession) CallTool(ctx context.Context, name string, args map[string]any) ([]string, bool, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	r, err := s.c.CallTool(ctx, req)
	if err != nil {
		return nil, false, err
	}
	var texts []string
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, r.IsError, nil
}

// ReadError sends resources/read straight through the client's transport,
// because mcp-go's Client keeps an error's code but drops its data. It
// builds the request the way the Client would: the per-request _meta and,
// over HTTP, the standard headers on the 2026 wire.
func (s *mcpGoSession) ReadError(ctx context.Context, uri string) (*rpcError, error) {
	params := map[string]any{"uri": uri}
	var header http.Header
	if mcp.IsModernProtocol(s.version) {
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    s.version,
			mcp.MetaKeyClientCapabilities: map[string]any{},
			mcp.MetaKeyClientInfo:         s.info,
		}
		encoded, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
		header = http.Header{}
		for k, v := range mcp.StandardHeaders(s.version, mcp.MethodResourcesRead, encoded) {
			header.Set(k, v)
		}
	}
	resp, err := s.t.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId("interop-missing-resource"),
		Method:  string(mcp.MethodResourcesRead),
		Params:  params,
		Header:  header,
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	if resp.Error == nil {
		return nil, fmt.Errorf("reading %s succeeded (%s); want a JSON-RPC error", uri, resp.Result)
	}
	e := &rpcError{Code: int64(resp.Error.Code), Message: resp.Error.Message}
	if resp.Error.Data != nil {
		if e.Data, err = json.Marshal(resp.Error.Data); err != nil {
			return nil, fmt.Errorf("re-encode error data: %w", err)
		}
	}
	// The high-level client must surface the same failure as an error,
	// never as empty contents.
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	if r, err := s.c.ReadResource(ctx, req); err == nil {
		return nil, fmt.Errorf("mcp-go Client.ReadResource(%s) succeeded with %d contents after a raw error", uri, len(r.Contents))
	}
	return e, nil
}

func (s *mcpGoSession) Close() error { return s.c.Close() }

// stdioTransport wraps a prepared command for mcp-go, which builds its own
// exec.Cmd: the command func hands back ours, stderr included.
func stdioTransport(cmd *exec.Cmd, stderr io.Writer) *transport.Stdio {
	return transport.NewStdioWithOptions(cmd.Path, nil, cmd.Args[1:],
		transport.WithCommandFunc(func(ctx context.Context, _ string, _ []string, _ []string) (*exec.Cmd, error) {
			c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
			c.Env = cmd.Env
			c.Dir = cmd.Dir
			return c, nil
		}),
		transport.WithCommandStderrWriter(stderr))
}

// TestMcpGo runs every check with mark3labs/mcp-go, in both eras, over
// stdio and Streamable HTTP.
func TestMcpGo(t *testing.T) {
	tg := conformanceTarget(t)
	for _, era := range eras {
		t.Run("stdio/"+era, func(t *testing.T) {
			s := connectMcpGo(t, stdioTransport(tg.stdio(), tg.stderr), era)
			runChecks(t, s, era)
		})
		t.Run("http/"+era, func(t *testing.T) {
			url, ok := tg.httpURL[era]
			if !ok {
				t.Skipf("%v: %s", errSkipEra, era)
			}
			tr, err := transport.NewStreamableHTTP(url)
			if err != nil {
				t.Fatal(err)
			}
			s := connectMcpGo(t, tr, era)
			runChecks(t, s, era)
		})
	}
}
