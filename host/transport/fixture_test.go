package transport

import (
	"context"
	"errors"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
	"github.com/corral-mcp/corral/host/mcp"
)

// faulty is a provider whose tools fail in every way a plugin can.
func faulty() *catalogtest.Provider {
	return &catalogtest.Provider{
		M: abi.Manifest{
			Name: "faulty", Version: "1.0.0", ABI: abi.Major,
			Tools: []abi.Tool{
				{Name: "fail_internal", InputSchema: []byte(`{"type":"object"}`)},
				{Name: "fail_panic", InputSchema: []byte(`{"type":"object"}`)},
				{Name: "block", InputSchema: []byte(`{"type":"object"}`)},
			},
		},
		Tool: func(ctx context.Context, r abi.CallToolRequest) (any, error) {
			switch r.Name {
			case "fail_internal":
				return nil, errors.New("secret detail that must not reach clients")
			case "fail_panic":
				panic("provider exploded")
			case "block":
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return nil, &abi.Error{Code: abi.CodeNotFound, Message: "no such tool"}
		},
	}
}

// newTestServer returns a Server over the conformance fixtures plus the
// faulty provider, with a fixed serverInfo so golden files are stable.
func newTestServer(t testing.TB) *mcp.Server {
	t.Helper()
	set, err := catalog.NewSet([]catalog.Provider{catalogtest.Conformance(), faulty()},
		catalog.Options{PageSize: 3})
	if err != nil {
		t.Fatalf("NewSet: %v", err)
	}
	return mcp.NewServer(catalog.New(set), mcp.Options{Version: "test", Instructions: "Fixtures for tests."})
}
