package interop

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadyzMeansLoaded checks the promise /readyz makes to a load balancer
// or a script like conformance.sh: once it answers 200, the plugins that
// were in the plugin directory at start-up are served. The plugin is copied
// in just before the start, as a deployment (or `make conformance`) does, so
// its modification time is fresh.
func TestReadyzMeansLoaded(t *testing.T) {
	if os.Getenv(envServerCmd) != "" {
		t.Skip("judges corral's start-up; not applicable to an external server")
	}
	if why := missingBuild(corralBin, conformanceWasm); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(conformanceWasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conformance.wasm"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startedHTTPServer(t, "--plugins", dir) // returns once /readyz is 200
	s := connectGoSDK(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", MaxRetries: -1}, era2026)
	tools, _, err := collect(testContext(t), s.ToolsPage)
	if err != nil {
		t.Fatalf("tools/list right after /readyz answered 200: %v", err)
	}
	if !slices.Contains(tools, toolSimpleText) {
		t.Fatalf("tools/list right after /readyz answered 200 lacks %s: %q", toolSimpleText, tools)
	}
}
