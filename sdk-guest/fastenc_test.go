package corral

import (
	"encoding/json"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

// TestCompleteResultMatchesEncodingJSON: the hand-assembled completion
// decodes to the same value encoding/json would have produced.
func TestCompleteResultMatchesEncodingJSON(t *testing.T) {
	two, zero := 2, 0
	tests := []abi.Completion{
		{Values: []string{}},
		{Values: []string{"a"}, Total: &zero},
		{Values: []string{"a\"b", "<é>", "\x00"}, Total: &two, HasMore: true},
	}
	for _, c := range tests {
		var e encoder
		raw := e.completeResult(&c)
		var got abi.CompleteResult
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if diff := cmp.Diff(abi.CompleteResult{Completion: c}, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", raw, diff)
		}
	}
}

func TestPromptResultMatchesEncodingJSON(t *testing.T) {
	tests := []abi.GetPromptResult{
		{Messages: []json.RawMessage{}},
		{Description: "a \"greeting\"", Messages: []json.RawMessage{
			json.RawMessage(`{"role":"user","content":{"type":"text","text":"hi"}}`),
			json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"<b>"}}`),
		}},
	}
	for _, res := range tests {
		var e encoder
		raw := e.promptResult(&res)
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("%s: (-json +hand)\n%s", raw, diff)
		}
	}
}
