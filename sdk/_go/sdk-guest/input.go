package corral

import (
	"encoding/json"
	"errors"

	"github.com/corral-mcp/corral/abi"
)

// NeedInput returns the error a read, prompt or tool handler returns to ask
// the client for input before it answers (input_required): requests are
// keyed by names the handler chooses, and state is the handler's own
// continuation, handed back (sealed by the host, so the client can neither
// read nor forge it) in the retried request's Input.State. The host only
// forwards requests the client declared the capability for; otherwise the
// client gets MissingRequiredClientCapability.
func NeedInput(state string, requests map[string]abi.InputRequest) error {
	return &abi.InputRequired{InputRequests: requests, State: state}
}

// Elicit is a form elicitation request: message, and a JSON Schema object
// (type "object" with properties) describing the answer.
func Elicit(message string, schema any) abi.InputRequest {
	params, _ := json.Marshal(struct {
		Mode            string `json:"mode"`
		Message         string `json:"message"`
		RequestedSchema any    `json:"requestedSchema"`
	}{"form", message, schema})
	return abi.InputRequest{Method: abi.InputElicit, Params: params}
}

// Sample is a sampling request: one user text message.
func Sample(text string, maxTokens int) abi.InputRequest {
	params, _ := json.Marshal(map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}}},
		"maxTokens": maxTokens,
	})
	return abi.InputRequest{Method: abi.InputSample, Params: params}
}

// ListRoots is a roots/list request.
func ListRoots() abi.InputRequest {
	return abi.InputRequest{Method: abi.InputListRoot, Params: json.RawMessage(`{}`)}
}

// HasCapability reports whether the request's client declared the named
// capability ("elicitation", "sampling", "roots").
func HasCapability(in abi.Input, name string) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(in.ClientCapabilities, &caps) != nil {
		return false
	}
	c, ok := caps[name]
	return ok && len(c) > 0 && c[0] == '{'
}

// Elicited is a client's answer to an elicitation.
type Elicited struct {
	Action  string         `json:"action"` // accept, decline or cancel
	Content map[string]any `json:"content,omitempty"`
}

// Elicitation returns the client's answer to the elicitation keyed key,
// and whether there is one.
func Elicitation(in abi.Input, key string) (Elicited, bool) {
	var e Elicited
	raw, ok := in.InputResponses[key]
	if !ok || json.Unmarshal(raw, &e) != nil || e.Action == "" {
		return Elicited{}, false
	}
	return e, true
}

// Sampled returns the text of the client's answer to the sampling request
// keyed key, and whether there is one.
func Sampled(in abi.Input, key string) (string, bool) {
	var r struct {
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	raw, ok := in.InputResponses[key]
	if !ok || json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	return r.Content.Text, true
}

// Roots returns the root URIs of the client's answer to the roots/list
// request keyed key, and whether there is one.
func Roots(in abi.Input, key string) ([]string, bool) {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	raw, ok := in.InputResponses[key]
	if !ok || json.Unmarshal(raw, &r) != nil {
		return nil, false
	}
	out := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		out[i] = root.URI
	}
	return out, true
}

// asInputRequired returns err's *abi.InputRequired, or nil.
func asInputRequired(err error) *abi.InputRequired {
	var ir *abi.InputRequired
	if errors.As(err, &ir) {
		return ir
	}
	return nil
}
