package corral

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

var fastSeeds = []string{
	`{"uri":"bfx000://doc","principal":{"id":"bench"}}`,
	`{"uri":"x://a","template":"x://{id}","variables":{"id":"a"},"principal":{"id":"p","groups":["g","h"]},"clientCapabilities":{}}`,
	` { "uri" : "x://a" , "principal" : { "id" : "p" , "groups" : [ ] } } `,
	`{"name":"greet","arguments":{"name":"cand-0042","style":"concise"},"principal":{"id":"anonymous"}}`,
	`{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"cand-01"},"arguments":{},"principal":{"id":"a"}}`,
	`{"uri":"x://\u00e9"}`, `{"URI":"x://a"}`, `{"uri":"é"}`, `{"uri":null}`, `{"uri":1}`, `{}`, `{"uri":"a"} x`,
	`{"variables":{"a":"1"},"variables":{"b":"2"}}`, `{"arguments":{"a":"1","a":"2"}}`,
	`{"clientCapabilities":{"elicitation":{}}}`, `{"principal":{"id":"a","id":"b"}}`, `[]`, ``, `{"uri":"a\u0000"}`,
}

// FuzzDecodeFast: whenever the fast path accepts a request, it decodes it
// exactly as encoding/json does; and decodeFast's errors are decode's.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		for op := range 3 {
			f.Add(uint8(op), s)
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, s string) {
		var fast, slow any
		switch op % 3 {
		case 0:
			fast, slow = new(abi.ReadResourceRequest), new(abi.ReadResourceRequest)
		case 1:
			fast, slow = new(abi.GetPromptRequest), new(abi.GetPromptRequest)
		default:
			fast, slow = new(abi.CompleteRequest), new(abi.CompleteRequest)
		}
		errFast := decodeFast([]byte(s), fast)
		errSlow := json.Unmarshal([]byte(s), slow)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%q: fast error %v, encoding/json error %v", s, errFast, errSlow)
		}
		if errSlow == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: (-json +fast)\n%s", s, cmp.Diff(slow, fast))
		}
	})
}

// TestDecodeFastTakesThePlainShape: the host's usual requests take the
// fast path (it is what the benchmark measures); escapes do not.
func TestDecodeFastTakesThePlainShape(t *testing.T) {
	tests := []struct {
		in   string
		v    any
		want bool
	}{
		{`{"uri":"bfx000://doc","principal":{"id":"bench"},"clientCapabilities":{}}`, new(abi.ReadResourceRequest), true},
		{`{"name":"greet","arguments":{"name":"a","style":"b"},"principal":{"id":"x","groups":["g"]}}`, new(abi.GetPromptRequest), true},
		{`{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"c"},"principal":{"id":"a"}}`, new(abi.CompleteRequest), true},
		{`{"uri":"x://\u00e9"}`, new(abi.ReadResourceRequest), false},
		{`{"uri":"x://a","uri":"x://b"}`, new(abi.ReadResourceRequest), false},
	}
	for _, tt := range tests {
		if got := fastOnly([]byte(tt.in), tt.v); got != tt.want {
			t.Errorf("fastOnly(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
