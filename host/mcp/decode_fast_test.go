package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeFastCases are messages for the differential test: the shapes the
// fast path takes, and the unusual ones it must leave to the general path.
var decodeFastCases = []struct {
	name string
	in   string
	fast bool // the fast path decodes it
}{
	{"read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://x",` + modernMeta + `}}`, true},
	{"string id", `{"jsonrpc":"2.0","id":"a\u00e9\"","method":"x"}`, true},
	{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"x"}`, true},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{"params null", `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, true},
	{"params empty", `{"jsonrpc":"2.0","id":3,"method":"x","params":{}}`, true},
	{"whitespace", " {\n\t\"jsonrpc\" : \"2.0\" ,\r\n \"id\" : 1 , \"method\" : \"x\" , \"params\" : { \"uri\" : \"u\" } } ", true},
	{"members in any order", `{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"p"},"method":"prompts/get","id":2,"jsonrpc":"2.0"}`, true},
	{"unknown members", `{"jsonrpc":"2.0","id":1,"method":"x","extra":[1,{"a":"}"}],"params":{"clientInfo":{"name":"c"},"x":"\\\"","n":-1.5e3,"t":true}}`, true},
	{"prompt", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"a","style":"b"},` + modernMeta + `}}`, true},
	{"completion", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"c"},"context":{"arguments":{"a":"b"}},` + modernMeta + `}}`, true},
	{"tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,2],"b":null}}}`, true},
	{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`, true},
	{"list cursor", `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"abc"}}`, true},
	{"cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"r"}}`, true},
	{"listen", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["a"]}}}`, true},
	{"retry", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{"k":{}},"requestState":"s"}}`, true},
	{"meta members", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":5,"io.modelcontextprotocol/logLevel":"info","other":{}}}}`, true},
	{"capabilities null", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":null}}}`, true},
	{"escaped string", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":"a\/b\u00e9\n"}}`, true},
	{"non-ASCII string", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"é"}}`, true},
	{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"name\":\"\xff\"}}", true},
	{"level", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, true},

	{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{"no jsonrpc", `{"id":1,"method":"x"}`, false},
	{"bad jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"x"}`, false},
	{"no method", `{"jsonrpc":"2.0","id":1}`, false},
	{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, false},
	{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, false},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, false},
	{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, false},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`, false},
	{"duplicate uri", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":"a","uri":"b"}}`, false},
	{"folded name", `{"jsonrpc":"2.0","id":1,"Method":"x"}`, false},
	{"folded param", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"URI":"a"}}`, false},
	{"folded meta", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_META":{}}}`, false},
	{"escaped name", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"\u0075ri":"a"}}`, false},
	{"array params", `{"jsonrpc":"2.0","id":1,"method":"x","params":[]}`, false},
	{"wrong type", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":5}}`, false},
	{"null uri", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":null}}`, false},
	{"null meta", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":null}}`, false},
	{"context null arguments", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"context":{"arguments":null}}}`, false},
	{"context other members", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"context":{"x":1,"arguments":{}}}}`, true},
	{"context folded", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"context":{"Arguments":{}}}}`, false},
	{"bad context", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"context":{"arguments":{"a":1}}}}`, false},
	{"trailing bytes", `{"jsonrpc":"2.0","id":1,"method":"x"}x`, false},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"x",}`, false},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"x","params":{`, false},
	{"bad raw", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"a":}}}`, false},
	{"control byte", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\x01\"}", false},
	{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"x\q"}`, false},
}

// TestDecodeDeepNesting: a message nested beyond encoding/json's limit is
// a parse error, even when the deep part is a member the fast path keeps
// raw.
func TestDecodeDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 9999) + strings.Repeat("]", 9999)
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":` + deep + `}}}`
	_, err := Decode([]byte(msg))
	if err == nil || err.Code != CodeParseError {
		t.Errorf("Decode = %v, want a parse error", err)
	}
}

// TestDecodeFastMatchesGeneral checks that the fast path takes the shapes
// it should and that what it decodes equals the general path's Message.
func TestDecodeFastMatchesGeneral(t *testing.T) {
	for _, tt := range decodeFastCases {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.TrimSpace([]byte(tt.in))
			_, ok := decodeFast(b)
			if ok != tt.fast {
				t.Errorf("decodeFast ok = %v, want %v", ok, tt.fast)
			}
			checkFastMatchesGeneral(t, b)
		})
	}
}

// FuzzDecodeFast: whenever the fast path decodes a message, the general
// path decodes it without error to an equal Message.
func FuzzDecodeFast(f *testing.F) {
	for _, tt := range decodeFastCases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] != '{' {
			return
		}
		checkFastMatchesGeneral(t, b)
	})
}

func checkFastMatchesGeneral(t *testing.T, b []byte) {
	t.Helper()
	fast, ok := decodeFast(b)
	if !ok {
		return
	}
	general, err := decodeObject(b)
	if err != nil {
		t.Fatalf("fast path decoded what the general path refuses (%s): %s", err.Message, b)
	}
	opts := cmp.AllowUnexported(Message{}, params{})
	if diff := cmp.Diff(general, fast, opts); diff != "" {
		t.Errorf("fast path differs from the general path (-general +fast):\n%s", diff)
	}
}

// stringMapCases are prompt arguments for the stringMap differential test.
var stringMapCases = []struct {
	in   string
	fast bool
}{
	{`{}`, true},
	{`{"name":"cand-0042","style":"concise"}`, true},
	{` { "a" : "x" , "a" : "y" } `, true},
	{`{"a":"\u00e9\n","b":"é"}`, true},
	{`{"a":null}`, false},
	{`{"a":1}`, false},
	{`{"\u0061":"x"}`, false},
	{`[]`, false},
	{`{"a":"x",}`, false},
	{`{"a":"x"}x`, false},
}

func TestStringMapMatchesUnmarshal(t *testing.T) {
	for _, tt := range stringMapCases {
		t.Run(tt.in, func(t *testing.T) {
			if _, ok := stringMap([]byte(tt.in)); ok != tt.fast {
				t.Errorf("stringMap ok = %v, want %v", ok, tt.fast)
			}
			checkStringMap(t, []byte(tt.in))
		})
	}
}

// FuzzStringMap: whenever stringMap decodes an object, encoding/json
// decodes it to the same map.
func FuzzStringMap(f *testing.F) {
	for _, tt := range stringMapCases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(checkStringMap)
}

func checkStringMap(t *testing.T, b []byte) {
	got, ok := stringMap(b)
	if !ok {
		return
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("stringMap decoded what encoding/json refuses (%v): %s", err, b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-encoding/json +stringMap):\n%s", diff)
	}
}
