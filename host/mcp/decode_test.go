package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corral-mcp/corral/host/internal/jsontest"
	"github.com/google/go-cmp/cmp"
)

// envelope is the top level of a JSON-RPC message, for the encoding/json
// reference.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// referenceDecode is how encoding/json reads a message that starts with
// '{' (the structs of jsonrpc.go, two passes): what Decode must agree with
// on input without repeated or case-folded member names.
func referenceDecode(b []byte) (*Message, *Error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		if !json.Valid(b) {
			return nil, errParse
		}
		var only struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(b, &only)
		id, _ := checkID(only.ID)
		return &Message{ID: id, hadID: true}, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: malformed JSON-RPC message.", Envelope: true}
	}
	id, idErr := checkID(env.ID)
	partial := &Message{ID: id, hadID: env.ID != nil}
	if env.Method != nil {
		partial.Method = *env.Method
	}
	if env.JSONRPC != "2.0" {
		return partial, &Error{Code: CodeInvalidRequest, Message: `Invalid Request: jsonrpc must be "2.0".`, Envelope: true}
	}
	if env.Method == nil {
		if env.ID != nil && (env.Result != nil || env.Error != nil) {
			return &Message{ID: id, IsResponse: true, result: env.Result, rpcErr: env.Error}, nil
		}
		return partial, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is missing.", Envelope: true}
	}
	if idErr != nil {
		return partial, idErr
	}
	if *env.Method == "" {
		return partial, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is empty.", Envelope: true}
	}
	m := &Message{ID: id, Method: *env.Method, hadID: id != nil}
	if len(env.Params) > 0 && !bytes.Equal(env.Params, []byte("null")) {
		if env.Params[0] != '{' {
			return m, &Error{Code: CodeInvalidParams, Message: "Invalid params: params must be an object.", Envelope: true}
		}
		m.Params = env.Params
		m.pErr = json.Unmarshal(env.Params, &m.p)
	}
	m.modern = m.p.Meta != nil && m.p.Meta.ProtocolVersion != nil
	return m, nil
}

// knownNames are the member names Decode reads, in any object.
var knownNames = []string{"jsonrpc", "id", "method", "params", "result", "error",
	"_meta", "cursor", "uri", "name", "arguments", "ref", "argument", "context", "level",
	"protocolVersion", "capabilities", "requestId", "notifications", "inputResponses", "requestState", "taskId",
	"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
	"io.modelcontextprotocol/logLevel", "progressToken", "type", "value",
	"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}

var decodeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://x",` + modernMeta + `}}`,
	`{"jsonrpc":"2.0","id":"a\u00e9\"","method":"x"}`,
	`{"jsonrpc":"2.0","id":-7,"method":"x"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":3,"method":"x","params":null}`,
	" {\n\t\"jsonrpc\" : \"2.0\" ,\r\n \"id\" : 1 , \"method\" : \"x\" , \"params\" : { \"uri\" : \"u\" } } ",
	`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"p"},"method":"prompts/get","id":2,"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","extra":[1,{"a":"}"}],"params":{"clientInfo":{"name":"c"},"x":"\\\"","n":-1.5e3,"t":true}}`,
	`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"c"},"context":{"arguments":{"a":"b","n":null}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,2],"b":null}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"r"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["a"]}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{"k":{}},"requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":5,"io.modelcontextprotocol/logLevel":"info","other":{}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":"a\/b\u00e9\n","name":"é"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"id":1,"method":"x"}`, `{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":null,"method":"x"}`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":[]}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":5,"name":"n"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":null,"_meta":null,"ref":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"context":{"arguments":{"a":1}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x"}x`, `{"jsonrpc":"2.0","id":1,"method":"x",}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\x01\"}", `{"jsonrpc":"2.0","id":1,"method":"x\q"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"notifications":{"resourceSubscriptions":[1]},"level":"debug"}}`,
}

// FuzzDecode holds Decode to encoding/json: on valid UTF-8 without
// repeated or case-folded member names both read the same message and
// answer the same error; a repeated or case-folded envelope or params
// member is always refused.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] != '{' {
			return
		}
		got, gotErr := Decode(b)
		if utf8.Valid(b) && (!json.Valid(b) || !jsontest.Folded(b, knownNames...)) {
			want, wantErr := referenceDecode(b)
			if diff := cmp.Diff(wantErr, gotErr); diff != "" {
				t.Fatalf("error for %q (-encoding/json +Decode):\n%s", b, diff)
			}
			if (want.pErrOrNil() == nil) != (got.pErrOrNil() == nil) {
				t.Fatalf("params error for %q: encoding/json %v, Decode %v", b, want.pErrOrNil(), got.pErrOrNil())
			}
			opts := cmp.Options{cmp.AllowUnexported(Message{}, params{}, requestMeta{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".pErr"
			}, cmp.Ignore())}
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Fatalf("message for %q (-encoding/json +Decode):\n%s", b, diff)
			}
		}
		if gotErr != nil || got.IsResponse {
			return
		}
		// Repeat or fold a member of the envelope, then of params.
		inner := b[1:]
		if bytes.TrimLeft(inner, " \t\r\n")[0] != '}' {
			inner = append([]byte{','}, inner...)
		}
		for _, inject := range []string{`"method":"a","method":"b"`, `"METHOD":"a"`, `"Params":{}`} {
			msg := append([]byte("{"+inject), inner...)
			if _, err := Decode(msg); err == nil || err.Code != CodeInvalidRequest {
				t.Fatalf("Decode(%q) = %v, want -32600", msg, err)
			}
		}
		if got.Params == nil {
			return
		}
		pin := got.Params[1:]
		if bytes.TrimLeft(pin, " \t\r\n")[0] != '}' {
			pin = append([]byte{','}, pin...)
		}
		for _, inject := range []string{`"uri":"a","uri":"b"`, `"URI":"a"`, `"_Meta":{}`} {
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{` + inject + string(pin) + `}`)
			if _, err := Decode(msg); err == nil || err.Code != CodeInvalidParams {
				t.Fatalf("Decode(%q) = %v, want -32602", msg, err)
			}
		}
	})
}

func (m *Message) pErrOrNil() error {
	if m == nil {
		return nil
	}
	return m.pErr
}

// TestDecodeDeepNesting: a message nested beyond encoding/json's limit is
// a parse error, also inside a member kept raw.
func TestDecodeDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 9999) + strings.Repeat("]", 9999)
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":` + deep + `}}}`
	_, err := Decode([]byte(msg))
	if err == nil || err.Code != CodeParseError {
		t.Fatalf("Decode = %v, want a parse error", err)
	}
}
