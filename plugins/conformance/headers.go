package main

import (
	"encoding/json"
	"fmt"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// mirroredHeadersSchema annotates arguments with x-mcp-header, so
// Streamable HTTP clients mirror them into Mcp-Param-* headers and the
// host checks those headers against the body (the conformance suite's
// http-custom-header-server-validation scenario).
const mirroredHeadersSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"Mirrored as Mcp-Param-Region","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","description":"Mirrored as Mcp-Param-Priority","x-mcp-header":"Priority"},` +
	`"query":{"type":"string","description":"Not mirrored"}},"required":["region"]}`

// addHeaderTools registers the tool with mirrored arguments.
func addHeaderTools(p *corral.Plugin) {
	p.Tool(abi.Tool{Name: "test_mirrored_headers", Title: "Mirrored headers",
		Description: "Echoes arguments that HTTP clients mirror into Mcp-Param-* headers",
		InputSchema: json.RawMessage(mirroredHeadersSchema)}, echoMirrored)
}

func echoMirrored(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	var args struct {
		Region   string `json:"region"`
		Priority *int64 `json:"priority"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		return nil, corral.InvalidParams("arguments: " + err.Error())
	}
	text := "region=" + args.Region
	if args.Priority != nil {
		text += fmt.Sprintf(" priority=%d", *args.Priority)
	}
	return corral.ToolText(text), nil
}
