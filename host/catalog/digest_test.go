package catalog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestRequestDigestRepeatedNames: a requestState is bound to the
// arguments as a plugin may read them. Members in another order, or
// spaced otherwise, are the same arguments; arguments repeating a name
// deeper down (the top level is refused before) are bound as written, not
// as encoding/json's last copy, so a state given for them opens for
// nothing else.
func TestRequestDigestRepeatedNames(t *testing.T) {
	p := abi.Principal{ID: "alice"}
	digest := func(args string) []byte { return requestDigest(p, abi.OpCallTool, "t", json.RawMessage(args)) }
	same := []struct{ a, b string }{
		{`{"a":1,"b":{"x":1,"y":2}}`, `{ "b": {"y":2,"x":1}, "a":1 }`},
		{`{"a":{"k":1,"k":2}}`, `{"a":{"k":1,"k":2}}`},
	}
	for _, tt := range same {
		if !bytes.Equal(digest(tt.a), digest(tt.b)) {
			t.Errorf("%s and %s bind differently", tt.a, tt.b)
		}
	}
	differ := []struct{ a, b string }{
		{`{"a":{"k":1,"k":2}}`, `{"a":{"k":2}}`},
		{`{"a":[{"k":"x","k":"y"}]}`, `{"a":[{"k":"y"}]}`},
		{`{"a":1}`, `{"a":2}`},
	}
	for _, tt := range differ {
		if bytes.Equal(digest(tt.a), digest(tt.b)) {
			t.Errorf("a state for %s also opens for %s", tt.a, tt.b)
		}
	}
}
