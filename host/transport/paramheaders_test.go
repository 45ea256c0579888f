package transport

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/mcp"
)

func TestCheckParamHeaders(t *testing.T) {
	params := []catalog.ParamHeader{
		{Header: "Region", Param: "region", Type: "string"},
		{Header: "Priority", Param: "priority", Type: "integer"},
		{Header: "Verbose", Param: "verbose", Type: "boolean"},
	}
	mismatch := func(msg string) *mcp.Error { return &mcp.Error{Code: mcp.CodeHeaderMismatch, Message: msg} }
	tests := []struct {
		name    string
		args    string
		headers map[string]string
		ok      bool
	}{
		{"plain", `{"region":"eu-west","priority":3,"verbose":true}`, map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-Priority": "3", "Mcp-Param-Verbose": "true"}, true},
		{"base64", `{"region":"Hello"}`, map[string]string{"mcp-param-region": "=?base64?SGVsbG8=?=", "Mcp-Param-Priority": "ignored"}, true},
		{"non-ascii needs base64", `{"region":"Région"}`, map[string]string{"Mcp-Param-Region": "=?base64?UsOpZ2lvbg==?="}, true},
		{"literal without suffix", `{"region":"=?base64?SGVsbG8="}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}, true},
		{"integer numerically", `{"region":"x","priority":30}`, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Priority": "3e1"}, true},
		{"null argument needs no header", `{"region":"x","verbose":null}`, map[string]string{"Mcp-Param-Region": "x"}, true},
		{"missing header", `{"region":"x"}`, nil, false},
		{"mismatch", `{"region":"x"}`, map[string]string{"Mcp-Param-Region": "y"}, false},
		{"bad padding", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?=", "x": ""}, false},
		{"bad alphabet", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, false},
		{"boolean spelled", `{"region":"x","verbose":false}`, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Verbose": "0"}, false},
		{"integer differs", `{"region":"x","priority":2}`, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Priority": "3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Add(k, v)
			}
			err := checkParamHeaders(h, json.RawMessage(tt.args), params, mismatch)
			if (err == nil) != tt.ok {
				t.Fatalf("got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
