package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantCode int    // 0: no error
		wantID   string // raw id expected on the message ("" for none)
		method   string
		modern   bool
		answer   bool // for errors: ShouldAnswer
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, wantID: "1", method: "tools/list"},
		{name: "string id kept raw", in: `{"jsonrpc":"2.0","id":"a\u00e9","method":"x"}`, wantID: `"a\u00e9"`, method: "x"},
		{name: "modern", in: `{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, wantID: "2", method: "x", modern: true},
		{name: "meta without version is legacy", in: `{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":{}}}`, wantID: "2", method: "x"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, method: "notifications/initialized"},
		{name: "params null", in: `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, wantID: "3", method: "x"},
		{name: "parse error", in: `{"jsonrpc":`, wantCode: CodeParseError, answer: true},
		{name: "garbage", in: `nope`, wantCode: CodeParseError, answer: true},
		{name: "empty", in: ` `, wantCode: CodeInvalidRequest, answer: true},
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, wantCode: CodeInvalidRequest, answer: true},
		{name: "scalar", in: `42`, wantCode: CodeInvalidRequest, answer: true},
		{name: "null id", in: `{"jsonrpc":"2.0","id":null,"method":"x"}`, wantCode: CodeInvalidRequest, answer: true},
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, wantCode: CodeInvalidRequest, answer: true},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"x"}`, wantCode: CodeInvalidRequest, answer: true},
		{name: "bad version keeps id", in: `{"jsonrpc":"1.0","id":7,"method":"x"}`, wantCode: CodeInvalidRequest, wantID: "7", answer: true},
		{name: "no method keeps id", in: `{"jsonrpc":"2.0","id":8}`, wantCode: CodeInvalidRequest, wantID: "8", answer: true},
		{name: "numeric method keeps id", in: `{"jsonrpc":"2.0","id":9,"method":5}`, wantCode: CodeInvalidRequest, wantID: "9", answer: true},
		{name: "array params", in: `{"jsonrpc":"2.0","id":10,"method":"x","params":[]}`, wantCode: CodeInvalidParams, wantID: "10", answer: true},
		{name: "broken notification is silent", in: `{"jsonrpc":"2.0","method":"x","params":[]}`, wantCode: CodeInvalidParams},
		{name: "client response", in: `{"jsonrpc":"2.0","id":11,"result":{}}`, wantID: "11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if tt.wantCode != 0 {
				if err == nil {
					t.Fatalf("Decode succeeded, want code %d", tt.wantCode)
				}
				if err.Code != tt.wantCode {
					t.Errorf("code = %d, want %d (%s)", err.Code, tt.wantCode, err.Message)
				}
				if got := ShouldAnswer(m); got != tt.answer {
					t.Errorf("ShouldAnswer = %v, want %v", got, tt.answer)
				}
				if got := string(IDOf(m)); got != tt.wantID {
					t.Errorf("id = %q, want %q", got, tt.wantID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := string(m.ID); got != tt.wantID {
				t.Errorf("id = %q, want %q", got, tt.wantID)
			}
			if m.Method != tt.method || m.Modern() != tt.modern {
				t.Errorf("method, modern = %q, %v; want %q, %v", m.Method, m.Modern(), tt.method, tt.modern)
			}
		})
	}
}

func TestEncodeError(t *testing.T) {
	tests := []struct {
		name string
		id   json.RawMessage
		err  *Error
		want string
	}{
		{"no id", nil, &Error{Code: -32700, Message: "Parse error."}, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error."}}`},
		{"data", json.RawMessage(`"x"`), errorWithData(-32602, `Bad "uri" <x>`, map[string]string{"uri": "a"}),
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"Bad \"uri\" \u003cx\u003e","data":{"uri":"a"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EncodeError(tt.id, tt.err)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !json.Valid(got) {
				t.Error("not valid JSON")
			}
		})
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"test://x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0"}]`, `{"id":null}`, `{"jsonrpc":"2.0","id":1e3,"method":"x"}`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			out := EncodeError(IDOf(m), err)
			if !json.Valid(out) {
				t.Fatalf("error response is not JSON: %s", out)
			}
			return
		}
		if m.ID != nil {
			// The echoed id must be a JSON string or integer.
			var v any
			if json.Unmarshal(m.ID, &v) != nil {
				t.Fatalf("id %q is not JSON", m.ID)
			}
			switch v.(type) {
			case string, float64:
			default:
				t.Fatalf("id %q is neither string nor number", m.ID)
			}
			out := EncodeError(m.ID, &Error{Code: 1, Message: "m"})
			if !json.Valid(out) {
				t.Fatalf("response is not JSON: %s", out)
			}
		}
		if m.Modern() && m.ProtocolVersion() == "" && m.p.Meta.ProtocolVersion == nil {
			t.Fatal("modern without a version")
		}
	})
}
