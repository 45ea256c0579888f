package corral

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

func TestNeedInput(t *testing.T) {
	p := New("ask", "1.0.0")
	p.Scheme("ask")
	p.Tool(abi.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if e, ok := Elicitation(r.Input, "ok"); ok && e.Action == "accept" && r.Input.State == "s" {
				return ToolText("confirmed"), nil
			}
			if !HasCapability(r.Input, "elicitation") {
				return ToolText("cannot ask"), nil
			}
			return nil, NeedInput("s", map[string]abi.InputRequest{
				"ok":    Elicit("Sure?", map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]string{"type": "boolean"}}}),
				"model": Sample("hi", 5),
				"roots": ListRoots(),
			})
		})
	p.Prompt(abi.Prompt{Name: "pr"}, func(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
		if text, ok := Sampled(r.Input, "model"); ok {
			roots, _ := Roots(r.Input, "roots")
			return Messages("", UserMessage(Text(text+" "+roots[0]))), nil
		}
		return nil, NeedInput("", map[string]abi.InputRequest{"model": Sample("hi", 5)})
	}, nil)

	tests := []struct {
		name       string
		op         abi.Op
		req        string
		wantStatus abi.Status
		want       string // a substring of the response
	}{
		{"asks", abi.OpCallTool, `{"name":"confirm","clientCapabilities":{"elicitation":{}}}`, abi.StatusInputRequired, `"method":"elicitation/create"`},
		{"asks with its state", abi.OpCallTool, `{"name":"confirm","clientCapabilities":{"elicitation":{}}}`, abi.StatusInputRequired, `"state":"s"`},
		{"no capability", abi.OpCallTool, `{"name":"confirm","clientCapabilities":{}}`, abi.StatusOK, "cannot ask"},
		{"answered", abi.OpCallTool, `{"name":"confirm","state":"s","inputResponses":{"ok":{"action":"accept","content":{"ok":true}}}}`, abi.StatusOK, "confirmed"},
		{"declined", abi.OpCallTool, `{"name":"confirm","state":"s","clientCapabilities":{"elicitation":{}},"inputResponses":{"ok":{"action":"decline"}}}`, abi.StatusInputRequired, `"inputRequests"`},
		{"prompt asks", abi.OpGetPrompt, `{"name":"pr"}`, abi.StatusInputRequired, `"sampling/createMessage"`},
		{"prompt answered", abi.OpGetPrompt, `{"name":"pr","inputResponses":{"model":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"},"roots":{"roots":[{"uri":"file:///r"}]}}}`, abi.StatusOK, "Paris file:///r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out := p.Handle(tt.op, []byte(tt.req))
			if st != tt.wantStatus {
				t.Fatalf("status %d (%s), want %d", st, out, tt.wantStatus)
			}
			if !json.Valid(out) || !strings.Contains(string(out), tt.want) {
				t.Errorf("response %s lacks %s", out, tt.want)
			}
		})
	}
	// The input request round-trips as abi.InputRequired.
	_, out := p.Handle(abi.OpCallTool, []byte(`{"name":"confirm","clientCapabilities":{"elicitation":{}}}`))
	var ir abi.InputRequired
	if err := json.Unmarshal(out, &ir); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range ir.InputRequests {
		keys = append(keys, k)
	}
	if diff := cmp.Diff(3, len(keys)); diff != "" || ir.InputRequests["roots"].Method != abi.InputListRoot {
		t.Errorf("input requests %v", ir.InputRequests)
	}
}
