// Command kvstore is the kv fixture of the cluster tests (make
// test-cluster builds it to build/cluster/kvstore.wasm): the tool kv_set
// stores a value under a key in the plugin's kv store and kv_get reads it
// back, so that a value written through one replica can be read through
// another, and a store's quota watched across replicas. A failed store
// operation is the tool's error result, naming the host's error.
package main

import (
	"encoding/json"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func main() {}

func init() { corral.Serve(newPlugin()) }

// args are both tools' arguments.
type args struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func newPlugin() *corral.Plugin {
	p := corral.New("kvstore", "1.0.0")
	p.Title("kv fixture")
	p.Request(abi.CapKV)
	p.Tool(abi.Tool{Name: "kv_set", Description: "Stores value under key",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"string"}},"required":["key","value"]}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			var a args
			if err := json.Unmarshal(r.Arguments, &a); err != nil {
				return corral.ToolError("arguments: " + err.Error()), nil
			}
			if err := corral.KV.Set(a.Key, []byte(a.Value)); err != nil {
				return corral.ToolError("set: " + err.Error()), nil
			}
			return corral.ToolText("stored " + a.Key), nil
		})
	p.Tool(abi.Tool{Name: "kv_get", Description: "Reads the value of key",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			var a args
			if err := json.Unmarshal(r.Arguments, &a); err != nil {
				return corral.ToolError("arguments: " + err.Error()), nil
			}
			v, err := corral.KV.Get(a.Key)
			if err != nil {
				return corral.ToolError("get: " + err.Error()), nil
			}
			return corral.ToolText(string(v)), nil
		})
	return p
}
