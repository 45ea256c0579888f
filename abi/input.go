package abi

import (
	"encoding/json"
	"fmt"
)

// StatusInputRequired: the result is an InputRequired. The guest needs
// input from the client (elicitation, sampling, roots) before it can answer
// a read_resource, get_prompt or call_tool request (ABI 1.1). The host
// passes the client's answers back in a retried request's Input.
const StatusInputRequired Status = 2

// Input-request methods a guest may use in InputRequired.InputRequests.
// Each needs the matching client capability; the host refuses the request
// with MissingRequiredClientCapability when the client did not declare it.
const (
	InputElicit   = "elicitation/create"     // needs the elicitation capability
	InputSample   = "sampling/createMessage" // needs the sampling capability
	InputListRoot = "roots/list"             // needs the roots capability
)

// Input is embedded in the read_resource, get_prompt and call_tool
// requests: what the client declared, and what it answered to an earlier
// InputRequired.
type Input struct {
	// ClientCapabilities are the MCP ClientCapabilities the request
	// declared (an object; on the 2025 protocol, those the session
	// declared at initialize, and the host bridges input requests to
	// server-to-client requests).
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	// InputResponses are the client's answers, by the keys of the
	// InputRequests they answer: ElicitResult, CreateMessageResult or
	// ListRootsResult objects. The host has checked their shape (and,
	// when the retry carried the host's requestState, dropped keys the
	// guest did not ask for).
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// State is the State of the InputRequired this request retries,
	// exactly as the guest returned it. The host kept it sealed: a client
	// can neither read nor forge it, and it only comes back for the same
	// principal, operation, name or URI and arguments, before it expires.
	State string `json:"state,omitempty"`
}

// InputRequest is one request for client input.
type InputRequest struct {
	Method string          `json:"method"` // InputElicit, InputSample or InputListRoot
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequired is the response of a call returning StatusInputRequired.
// At least one of InputRequests and State must be set.
type InputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	State         string                  `json:"state,omitempty"`
}

// Error implements error, so a provider can return an InputRequired from
// a call.
func (r *InputRequired) Error() string {
	return fmt.Sprintf("input required (%d input requests)", len(r.InputRequests))
}
