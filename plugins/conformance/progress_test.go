package main

import (
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
	"github.com/google/go-cmp/cmp"
)

func TestToolWithProgress(t *testing.T) {
	h := corral.NewFakeHost()
	defer corral.UseHost(h)()
	status, out := newPlugin().Handle(abi.OpCallTool, []byte(`{"name":"test_tool_with_progress","principal":{"id":"c"}}`))
	if status != abi.StatusOK || strings.Contains(string(out), "isError") {
		t.Fatalf("call: %d %s", status, out)
	}
	want := []corral.FakeProgress{{Progress: 0, Total: 100}, {Progress: 50, Total: 100}, {Progress: 100, Total: 100}}
	if diff := cmp.Diff(want, h.Progress()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
