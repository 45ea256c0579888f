package catalogtest

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// PNG1x1 is a 1×1 transparent PNG, base64.
const PNG1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// StaticText is the text of test://static-text.
const StaticText = "This is the content of the static text resource."

// Conformance returns a native provider named "conformance" with the
// fixture names the official MCP conformance suite looks for. The Wasm
// plugin plugins/conformance serves the same fixtures through the ABI.
func Conformance() *Provider {
	text := func(uri, mime, t string) map[string]any {
		return map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": mime, "text": t}}}
	}
	words := []string{"paris", "park", "party", "test-alpha", "test-beta"}
	return &Provider{
		M: abi.Manifest{
			Name: "conformance", Version: "1.0.0", ABI: abi.Major,
			Description: "Fixtures for the official MCP conformance suite",
			Schemes:     []string{"test"},
			Resources: []abi.Resource{
				{URI: "test://static-text", Name: "static-text", Title: "Static text", MimeType: "text/plain"},
				{URI: "test://static-binary", Name: "static-binary", Title: "Static binary", MimeType: "image/png"},
				{URI: "test://watched-resource", Name: "watched-resource", MimeType: "text/plain"},
			},
			Templates: []abi.Template{{
				URITemplate: "test://template/{id}/data", Name: "template", Title: "Templated data",
				MimeType: "application/json", Complete: []string{"id"},
			}},
			Prompts: []abi.Prompt{
				{Name: "test_simple_prompt", Description: "A prompt without arguments"},
				{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments",
					Arguments: []abi.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}},
					Complete:  []string{"arg1", "arg2"}},
				{Name: "test_prompt_with_embedded_resource",
					Arguments: []abi.PromptArgument{{Name: "resourceUri", Required: true}}},
				{Name: "test_prompt_with_image"},
			},
			Tools: []abi.Tool{
				{Name: "test_simple_text", Description: "Returns text", InputSchema: json.RawMessage(`{"type":"object"}`)},
				{Name: "test_error_handling", Description: "Always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
			},
		},
		Read: func(_ context.Context, r abi.ReadResourceRequest) (any, error) {
			switch {
			case r.URI == "test://static-text":
				return text(r.URI, "text/plain", StaticText), nil
			case r.URI == "test://watched-resource":
				return text(r.URI, "text/plain", "watched"), nil
			case r.URI == "test://static-binary":
				return map[string]any{"contents": []any{map[string]any{"uri": r.URI, "mimeType": "image/png", "blob": PNG1x1}}}, nil
			case r.Template == "test://template/{id}/data":
				id := r.Variables["id"]
				b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
				return text(r.URI, "application/json", string(b)), nil
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such resource"}
		},
		Prompt: func(_ context.Context, r abi.GetPromptRequest) (any, error) {
			msg := func(content map[string]any) map[string]any { return map[string]any{"role": "user", "content": content} }
			switch r.Name {
			case "test_simple_prompt":
				return map[string]any{"messages": []any{msg(map[string]any{"type": "text", "text": "This is a simple prompt for testing."})}}, nil
			case "test_prompt_with_arguments":
				t := "Prompt with arguments: arg1='" + r.Arguments["arg1"] + "', arg2='" + r.Arguments["arg2"] + "'"
				return map[string]any{"messages": []any{msg(map[string]any{"type": "text", "text": t})}}, nil
			case "test_prompt_with_embedded_resource":
				return map[string]any{"messages": []any{
					msg(map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://static-text", "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
					msg(map[string]any{"type": "text", "text": "Please process the embedded resource above."}),
				}}, nil
			case "test_prompt_with_image":
				return map[string]any{"messages": []any{
					msg(map[string]any{"type": "image", "data": PNG1x1, "mimeType": "image/png"}),
					msg(map[string]any{"type": "text", "text": "Please analyze the image above."}),
				}}, nil
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such prompt"}
		},
		Tool: func(_ context.Context, r abi.CallToolRequest) (any, error) {
			switch r.Name {
			case "test_simple_text":
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": "This is a simple text response for testing."}}}, nil
			case "test_error_handling":
				return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "This tool intentionally returns an error for testing"}}}, nil
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such tool"}
		},
		Complete: func(_ context.Context, r abi.CompleteRequest) (*abi.CompleteResult, error) {
			vals := []string{}
			for _, w := range words {
				if strings.HasPrefix(w, r.Argument.Value) {
					vals = append(vals, w)
				}
			}
			if r.Ref.Type == "ref/resource" {
				vals = vals[:0]
				for _, id := range []string{"1", "2", "3", "42"} {
					if strings.HasPrefix(id, r.Argument.Value) {
						vals = append(vals, id)
					}
				}
			}
			n := len(vals)
			return &abi.CompleteResult{Completion: abi.Completion{Values: vals, Total: &n}}, nil
		},
	}
}
