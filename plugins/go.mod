module github.com/corral-mcp/corral/plugins

go 1.26.0

require (
	github.com/corral-mcp/corral v0.0.0
	github.com/google/go-cmp v0.7.0
)

replace github.com/corral-mcp/corral => ../
