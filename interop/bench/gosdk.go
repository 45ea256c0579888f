package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newGoSDKHandler serves the fixture with the official Go SDK v1.8.0:
// native handlers, a stateless Streamable HTTP handler answering JSON (the
// 2026-07-28 wire), and list pages of 100 like corral's.
func newGoSDKHandler(count int) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-bench", Version: "v1.8.0"}, &mcp.ServerOptions{
		PageSize: 100,
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			values := []string{}
			if r.Params.Ref != nil && r.Params.Ref.Type == "ref/prompt" && r.Params.Argument.Name == "name" {
				values = complete(r.Params.Argument.Value)
			}
			res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Total: len(values)}}
			if len(values) > 100 {
				values, res.Completion.HasMore = values[:100], true
			}
			res.Completion.Values = values
			return res, nil
		},
	})
	s.AddResource(&mcp.Resource{URI: docURI, Name: "doc", Title: "1 KiB document", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: docText}}}, nil
		})
	readItem := func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "item " + r.Params.URI}}}, nil
	}
	for i := 1; i < count; i++ {
		s.AddResource(&mcp.Resource{URI: itemURI(i), Name: fmt.Sprintf("item-%04d", i), MIMEType: "text/plain"}, readItem)
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "A greeting with two arguments", Arguments: []*mcp.PromptArgument{
		{Name: "name", Description: "Who to greet", Required: true},
		{Name: "style", Description: "How to answer", Required: true},
	}}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text := greeting(r.Params.Arguments["name"], r.Params.Arguments["style"])
		return &mcp.GetPromptResult{Description: "A greeting", Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: text}},
		}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}
