module github.com/corral-mcp/corral/examples/go

go 1.26.0

require (
	github.com/corral-mcp/corral v0.0.0
	github.com/corral-mcp/corral/sdk-guest v0.0.0
)

replace (
	github.com/corral-mcp/corral => ../../
	github.com/corral-mcp/corral/sdk-guest => ../../sdk-guest
)
