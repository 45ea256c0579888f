package corral

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

func TestContentHelpers(t *testing.T) {
	tests := []struct {
		name string
		got  json.RawMessage
		want string
	}{
		{"text contents", TextContents("x://a", "text/plain", "line\n\"q\" <b>"),
			`{"uri":"x://a","mimeType":"text/plain","text":"line\n\"q\" <b>"}`},
		{"text contents without mime", TextContents("x://a", "", ""), `{"uri":"x://a","text":""}`},
		{"blob contents", BlobContents("x://b", "image/png", []byte("\x89PNG")), `{"uri":"x://b","mimeType":"image/png","blob":"iVBORw=="}`},
		{"text block", Text("hi"), `{"type":"text","text":"hi"}`},
		{"image block", Image([]byte{1, 2, 3}, "image/png"), `{"type":"image","data":"AQID","mimeType":"image/png"}`},
		{"audio block", Audio([]byte{1}, "audio/wav"), `{"type":"audio","data":"AQ==","mimeType":"audio/wav"}`},
		{"embedded resource", EmbeddedResource(TextContents("x://a", "text/plain", "t")),
			`{"type":"resource","resource":{"uri":"x://a","mimeType":"text/plain","text":"t"}}`},
		{"resource link", ResourceLink(abi.Resource{URI: "x://a", Name: "a", MimeType: "text/plain"}),
			`{"type":"resource_link","uri":"x://a","name":"a","mimeType":"text/plain"}`},
		{"annotations", WithAnnotations(Text("t"), Annotations{Audience: []string{"user", "assistant"}, Priority: Priority(0.5), LastModified: "2025-01-02T03:04:05Z"}),
			`{"type":"text","text":"t","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-02T03:04:05Z"}}`},
		{"zero priority kept", WithAnnotations(Text("t"), Annotations{Priority: Priority(0)}),
			`{"type":"text","text":"t","annotations":{"priority":0}}`},
		{"empty annotations", WithAnnotations(Text("t"), Annotations{}), `{"type":"text","text":"t"}`},
		{"message", AssistantMessage(Text("ok")), `{"role":"assistant","content":{"type":"text","text":"ok"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(tt.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !json.Valid(tt.got) {
				t.Errorf("invalid JSON: %s", tt.got)
			}
		})
	}
}

func TestResultHelpers(t *testing.T) {
	if r := ToolError("bad"); !r.IsError || string(r.Content[0]) != `{"type":"text","text":"bad"}` {
		t.Errorf("ToolError = %+v", r)
	}
	if r := ToolText("ok"); r.IsError || len(r.Content) != 1 {
		t.Errorf("ToolText = %+v", r)
	}
	if got := Timestamp(time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))); got != "2025-03-04T04:06:07Z" {
		t.Errorf("Timestamp = %s", got)
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\x00\x1f\t", `"\u0000\u001f\t"`},
		{"<&>", `"<&>"`},
		{"héllo ✓", `"héllo ✓"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"sep\u2028", `"sep\u2028"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := string(appendString(nil, tt.in)); got != tt.want {
				t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzAppendString checks that every string encodes as valid JSON that
// decodes back to the input (with invalid UTF-8 replaced).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00", "\xff\xfe", "\u2028x", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, b, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	})
}
