package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/catalog"
)

func TestDecodeHeaderValue(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"tools/list", "tools/list", true},
		{"  padded\t", "padded", true},
		{"=?base64?dGVzdDovL8O8?=", "test://ü", true},
		{"=?base64?ICBzcGFjZWQgIA==?=", "  spaced  ", true},
		{"=?base64?not*base64?=", "", false},
		{"=?base64?/w==?=", "", false}, // not UTF-8
		{"=?BASE64?eA==?=", "=?BASE64?eA==?=", true},
		{"=?base64?eA==", "=?base64?eA==", true},
		{"caf\xc3\xa9", "", false},
		{"a\x7fb", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := DecodeHeaderValue(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"tools/call", "=?base64?dGVzdA==?=", "=?base64?!!?=", " x ", "=?base64??="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := DecodeHeaderValue(v)
		if err != nil {
			return
		}
		if !strings.HasPrefix(strings.TrimSpace(v), "=?base64?") {
			for i := 0; i < len(got); i++ {
				if got[i] < 0x20 || got[i] > 0x7e {
					t.Fatalf("plain value %q decoded to non-printable %q", v, got)
				}
			}
		}
	})
}

func TestCheckParamHeaders(t *testing.T) {
	params := []catalog.ParamHeader{
		{Header: "Region", Param: "region", Type: "string"},
		{Header: "Priority", Param: "priority", Type: "integer"},
		{Header: "Verbose", Param: "verbose", Type: "boolean"},
	}
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
		// A repeated argument is never checked by one copy while the tool
		// might read the other: encoding/json kept the last one.
		{"repeated, header matches the last", `{"region":"eu","region":"us"}`, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"repeated, header matches the first", `{"region":"eu","region":"us"}`, map[string]string{"Mcp-Param-Region": "eu"}, false},
		{"repeated by an escape", `{"region":"eu","\u0072egion":"us"}`, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"unmirrored argument repeated", `{"region":"eu","x":1,"x":2}`, map[string]string{"Mcp-Param-Region": "eu"}, false},
		{"string with an escape", `{"region":"\u0065u"}`, map[string]string{"Mcp-Param-Region": "eu"}, true},
		{"integer as a string", `{"region":"x","priority":"3"}`, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Priority": "3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Add(k, v)
			}
			err := checkParamHeaders(h, json.RawMessage(tt.args), params)
			if (err == nil) != tt.ok {
				t.Fatalf("got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
