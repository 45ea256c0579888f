package interop

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKInputBridge2025 has the official Go SDK client, on a 2025-11-25
// session, answer the conformance plugin's elicitation and sampling
// through its ElicitationHandler and CreateMessageHandler: corral turns the
// plugin's input_required into server-to-client requests (stdio inline,
// HTTP on the POST's event stream) and calls the plugin again with the
// answers.
func TestGoSDKInputBridge2025(t *testing.T) {
	tg := conformanceTarget(t)
	transports := map[string]func() mcp.Transport{
		"stdio": func() mcp.Transport { return &mcp.CommandTransport{Command: tg.stdio()} },
	}
	if url := tg.httpURL[era2025]; url != "" {
		transports["http"] = func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1} }
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"test_elicitation", map[string]any{"message": "Who are you?"},
			`User response: action=accept, content={"email":"go@example.com","username":"gopher"}`},
		{"test_elicitation", map[string]any{"message": "decline"}, `User response: action=decline, content={}`},
		{"test_sampling", map[string]any{"prompt": "Capital of France?"}, `LLM response: Paris (asked: Capital of France?)`},
		{"test_elicitation_sep1034_defaults", nil, `Elicitation completed: action=accept, content={"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}`},
	}
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "corral-interop-go-sdk", Version: "1.8.0"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if r.Params.Message == "decline" {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					content := map[string]any{"username": "gopher", "email": "go@example.com"}
					if !strings.HasPrefix(r.Params.Message, "Who") {
						// Accept the schema's defaults (SEP-1034).
						content = map[string]any{}
						props, _ := r.Params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
						for k, v := range props {
							content[k] = v.(map[string]any)["default"]
						}
					}
					return &mcp.ElicitResult{Action: "accept", Content: content}, nil
				},
				//lint:ignore SA1019 sampling is what the 2025-11-25 scenario exercises
				CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					asked := r.Params.Messages[0].Content.(*mcp.TextContent).Text
					//lint:ignore SA1019 as above
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model",
						Content: &mcp.TextContent{Text: "Paris (asked: " + asked + ")"}}, nil
				},
			})
			cs, err := c.Connect(testContext(t), transport(), &mcp.ClientSessionOptions{ProtocolVersion: era2025})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			for _, tt := range tests {
				res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
				if err != nil {
					t.Errorf("%s: %v", tt.tool, err)
					continue
				}
				if len(res.Content) != 1 {
					t.Errorf("%s: %d content blocks", tt.tool, len(res.Content))
					continue
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tt.want {
					t.Errorf("%s = %q, want %q", tt.tool, got, tt.want)
				}
			}
		})
	}
}
