package main

import (
	"fmt"
	"strings"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// The input_required (MRTR, SEP-2322) fixtures of the conformance suite.
// Each asks the client for input through corral.NeedInput, and answers
// once the retried request carries the answers; the host seals the
// state, checks the client's capabilities and validates the answers.

// schema returns a form schema of required properties of one type.
func schema(typ string, props ...string) map[string]any {
	p := map[string]any{}
	for _, name := range props {
		p[name] = map[string]string{"type": typ}
	}
	return map[string]any{"type": "object", "properties": p, "required": props}
}

// accepted returns the string field of an accepted elicitation.
func accepted(in abi.Input, key, field string) (string, bool) {
	e, ok := corral.Elicitation(in, key)
	if !ok || e.Action != "accept" {
		return "", false
	}
	switch v := e.Content[field].(type) {
	case string:
		return v, true
	case bool, float64:
		return fmt.Sprint(v), true
	}
	return "", false
}

var askName = map[string]abi.InputRequest{"user_name": corral.Elicit("What is your name?", schema("string", "name"))}

var mrtrTools = []tool{
	{abi.Tool{Name: "test_input_required_result_elicitation", Description: "Asks the client for a name (elicitation), then greets it"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if name, ok := accepted(r.Input, "user_name", "name"); ok {
				return corral.ToolText("Hello, " + name + "!"), nil
			}
			return nil, corral.NeedInput("", askName)
		}},
	{abi.Tool{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question (sampling), then returns its answer"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if answer, ok := corral.Sampled(r.Input, "capital_question"); ok {
				return corral.ToolText("The model said: " + answer), nil
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{
				"capital_question": corral.Sample("What is the capital of France?", 100)})
		}},
	{abi.Tool{Name: "test_input_required_result_list_roots", Description: "Asks the client for its roots, then lists them"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if roots, ok := corral.Roots(r.Input, "client_roots"); ok {
				return corral.ToolText("Client roots: " + strings.Join(roots, ", ")), nil
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{"client_roots": corral.ListRoots()})
		}},
	{abi.Tool{Name: "test_input_required_result_request_state", Description: "Asks for confirmation with a requestState, and checks the state comes back"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if _, ok := accepted(r.Input, "confirm", "ok"); ok && r.Input.State == "awaiting-confirmation" {
				return corral.ToolText("state-ok: the requestState came back intact and the request was confirmed"), nil
			}
			return nil, corral.NeedInput("awaiting-confirmation", map[string]abi.InputRequest{
				"confirm": corral.Elicit("Please confirm", schema("boolean", "ok"))})
		}},
	{abi.Tool{Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name, a model greeting and the roots at once"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			name, ok1 := accepted(r.Input, "user_name", "name")
			greeting, ok2 := corral.Sampled(r.Input, "greeting")
			roots, ok3 := corral.Roots(r.Input, "client_roots")
			if ok1 && ok2 && ok3 && r.Input.State == "multiple" {
				return corral.ToolText(fmt.Sprintf("%s, %s (roots: %s)", greeting, name, strings.Join(roots, ", "))), nil
			}
			return nil, corral.NeedInput("multiple", map[string]abi.InputRequest{
				"user_name":    askName["user_name"],
				"greeting":     corral.Sample("Generate a greeting", 50),
				"client_roots": corral.ListRoots(),
			})
		}},
	{abi.Tool{Name: "test_input_required_result_multi_round", Description: "Asks for a name, then (in a second round) a colour"},
		multiRound},
	{abi.Tool{Name: "test_input_required_result_tampered_state", Description: "Asks for confirmation with a sealed requestState; a tampered state is refused by the host"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if _, ok := accepted(r.Input, "confirm", "ok"); ok && r.Input.State == "tamper-check" {
				return corral.ToolText("confirmed with an intact requestState"), nil
			}
			return nil, corral.NeedInput("tamper-check", map[string]abi.InputRequest{
				"confirm": corral.Elicit("Please confirm", schema("boolean", "ok"))})
		}},
	{abi.Tool{Name: "test_input_required_result_capabilities", Description: "Asks only for the kinds of input the client declared"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if len(r.Input.InputResponses) > 0 {
				return corral.ToolText(fmt.Sprintf("received %d answers", len(r.Input.InputResponses))), nil
			}
			reqs := map[string]abi.InputRequest{}
			if corral.HasCapability(r.Input, "elicitation") {
				reqs["user_name"] = askName["user_name"]
			}
			if corral.HasCapability(r.Input, "sampling") {
				reqs["question"] = corral.Sample("What is the capital of France?", 100)
			}
			if corral.HasCapability(r.Input, "roots") {
				reqs["client_roots"] = corral.ListRoots()
			}
			if len(reqs) == 0 {
				return corral.ToolText("the client declared no input capability; nothing to ask"), nil
			}
			return nil, corral.NeedInput("", reqs)
		}},
	{abi.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability: without it the host answers MissingRequiredClientCapability (-32021)"},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if answer, ok := corral.Sampled(r.Input, "sample"); ok {
				return corral.ToolText("The model said: " + answer), nil
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{"sample": corral.Sample("Say hello", 10)})
		}},
}

// multiRound keeps its progress in the sealed state: "" → ask the name,
// "name:<n>" → ask the colour, then answer.
func multiRound(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	if name, ok := strings.CutPrefix(r.Input.State, "name:"); ok {
		if color, ok := accepted(r.Input, "step2", "color"); ok {
			return corral.ToolText(fmt.Sprintf("%s likes %s", name, color)), nil
		}
		return nil, colourRound(name)
	}
	if name, ok := accepted(r.Input, "step1", "name"); ok && r.Input.State == "round-1" {
		return nil, colourRound(name)
	}
	return nil, corral.NeedInput("round-1", map[string]abi.InputRequest{
		"step1": corral.Elicit("Step 1: What is your name?", schema("string", "name"))})
}

func colourRound(name string) error {
	return corral.NeedInput("name:"+name, map[string]abi.InputRequest{
		"step2": corral.Elicit("Step 2: What is your favorite color?", schema("string", "color"))})
}

// promptWithInput asks for context before rendering its prompt.
func promptWithInput(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
	if c, ok := accepted(r.Input, "user_context", "context"); ok {
		return corral.Messages("A prompt built from client input",
			corral.UserMessage(corral.Text("Use this context: "+c))), nil
	}
	return nil, corral.NeedInput("", map[string]abi.InputRequest{
		"user_context": corral.Elicit("What context should the prompt use?", schema("string", "context"))})
}

// addMRTR registers the input_required fixtures.
func addMRTR(p *corral.Plugin) {
	p.Prompt(abi.Prompt{Name: "test_input_required_result_prompt", Title: "Input-required prompt",
		Description: "Asks the client for context (elicitation) before rendering"}, promptWithInput, nil)
	for _, t := range mrtrTools {
		p.Tool(t.def, t.call)
	}
}
