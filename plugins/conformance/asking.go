package main

import (
	"encoding/json"
	"fmt"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// The tools of the suite's 2025 scenarios that ask the client for input
// (tools-call-elicitation, tools-call-sampling, elicitation-sep1034-defaults,
// elicitation-sep1330-enums). They ask through corral.NeedInput like the
// input_required fixtures, so the same tool serves both eras: a 2026-07-28
// client answers input_required, and on a 2025-11-25 session the host
// bridges the requests to server-to-client requests.

// stringArg returns the string argument name of a tool call, or "".
func stringArg(r *abi.CallToolRequest, name string) string {
	var args map[string]any
	_ = json.Unmarshal(r.Arguments, &args)
	s, _ := args[name].(string)
	return s
}

// elicitedText describes an elicitation answer: its action and content.
func elicitedText(e corral.Elicited) string {
	content, _ := json.Marshal(e.Content)
	if e.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", e.Action, content)
}

// askOnce answers with done(answer) once the client answered the
// elicitation keyed "answer", and otherwise asks it.
func askOnce(message string, schema map[string]any, done func(corral.Elicited) string) corral.ToolFunc {
	return func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
		if e, ok := corral.Elicitation(r.Input, "answer"); ok {
			return corral.ToolText(done(e)), nil
		}
		return nil, corral.NeedInput("", map[string]abi.InputRequest{"answer": corral.Elicit(message, schema)})
	}
}

// sep1034Schema has a default for every primitive type.
var sep1034Schema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	},
}

// titled returns {const, title} options for titled enums.
func titled(pairs ...string) []map[string]string {
	var out []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]string{"const": pairs[i], "title": pairs[i+1]})
	}
	return out
}

// sep1330Schema has each of the five enum shapes.
var sep1330Schema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"untitledSingle": map[string]any{"type": "string", "description": "Pick one option",
			"enum": []string{"option1", "option2", "option3"}},
		"titledSingle": map[string]any{"type": "string", "description": "Pick one titled option",
			"oneOf": titled("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
		"legacyEnum": map[string]any{"type": "string", "description": "Pick one (legacy enumNames)",
			"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti": map[string]any{"type": "array", "description": "Pick several options",
			"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti": map[string]any{"type": "array", "description": "Pick several titled options",
			"items": map[string]any{"anyOf": titled("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
	},
}

var askingTools = []tool{
	{abi.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email (elicitation) with the given message",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if e, ok := corral.Elicitation(r.Input, "answer"); ok {
				return corral.ToolText("User response: " + elicitedText(e)), nil
			}
			message := stringArg(r, "message")
			if message == "" {
				message = "Please provide your information"
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{"answer": corral.Elicit(message, map[string]any{
				"type": "object",
				"properties": map[string]any{
					"username": map[string]string{"type": "string", "description": "User's response"},
					"email":    map[string]string{"type": "string", "description": "User's email address"},
				},
				"required": []string{"username", "email"},
			})})
		}},
	{abi.Tool{Name: "test_sampling", Description: "Sends the given prompt to the client's model (sampling) and returns its answer",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			if answer, ok := corral.Sampled(r.Input, "answer"); ok {
				return corral.ToolText("LLM response: " + answer), nil
			}
			prompt := stringArg(r, "prompt")
			if prompt == "" {
				prompt = "Say hello"
			}
			return nil, corral.NeedInput("", map[string]abi.InputRequest{"answer": corral.Sample(prompt, 100)})
		}},
	{abi.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits a form whose fields all carry defaults (SEP-1034)"},
		askOnce("Please review and update the form fields with defaults", sep1034Schema,
			func(e corral.Elicited) string { return "Elicitation completed: " + elicitedText(e) })},
	{abi.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits a form with the five enum shapes (SEP-1330)"},
		askOnce("Please select options from the enum fields", sep1330Schema,
			func(e corral.Elicited) string { return "Elicitation completed: " + elicitedText(e) })},
}
