package main

import (
	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// withProgress reports 0/100, 50/100 and 100/100 through the host, which
// sends them as notifications/progress when the request carried a
// progressToken (and drops them otherwise).
func withProgress(*abi.CallToolRequest) (*abi.CallToolResult, error) {
	for _, p := range []float64{0, 50, 100} {
		if err := corral.Progress(p, 100, ""); err != nil {
			return nil, err
		}
	}
	return corral.ToolText("Tool with progress executed successfully"), nil
}
