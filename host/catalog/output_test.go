package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestReadKeepsStringBytes: a read's text is sent as the provider wrote
// it, escapes included, except a \u escape of a surrogate: encoding/json
// decodes a lone one to U+FFFD, so such a text is re-encoded and sent as
// encoding/json would have sent it (a pair becomes its character).
func TestReadKeepsStringBytes(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"plain", `"plain <&> text"`, `"plain <&> text"`},
		{"escapes kept", `"a\nb \/ \u00e9 \"q\""`, `"a\nb \/ \u00e9 \"q\""`},
		{"lone high surrogate", `"lone \ud800 x"`, "\"lone \uFFFD x\""},
		{"lone low surrogate", `"\udc00"`, "\"\uFFFD\""},
		{"pair", `"pair \ud83d\ude00"`, "\"pair \U0001F600\""},
		{"U+2028 kept raw", "\"\u2028\"", "\"\u2028\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := fuzzSet(t, []byte(`{"contents":[{"uri":"fz://a","text":`+tc.text+`}]}`))
			rr, err := s.ReadResource(context.Background(), Request{Principal: anonymous}, "fz://a")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(rr.Contents[0]), `{"uri":"fz://a","text":`+tc.want+`}`; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// TestReadSizeCountsDecodedBytes: MaxContentBytes (1 KiB in fuzzSet)
// counts the decoded text, not its escaped form.
func TestReadSizeCountsDecodedBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		ok   bool
	}{
		{"1024 escaped newlines", strings.Repeat(`\n`, 1024), true},
		{"1025 escaped newlines", strings.Repeat(`\n`, 1025), false},
		{"512 two-byte escapes", strings.Repeat(`\u00e9`, 512), true},
		{"513 two-byte escapes", strings.Repeat(`\u00e9`, 513), false},
		{"341 lone surrogates", strings.Repeat(`\ud800`, 341), true}, // U+FFFD is 3 bytes
		{"342 lone surrogates", strings.Repeat(`\ud800`, 342), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := fuzzSet(t, []byte(`{"contents":[{"uri":"fz://a","text":"`+tc.text+`"}]}`))
			_, err := s.ReadResource(context.Background(), Request{Principal: anonymous}, "fz://a")
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestStaticResourceBytes: a manifest resource is pre-encoded to exactly
// the bytes encoding/json writes, and invalid raw JSON is refused as it
// was.
func TestStaticResourceBytes(t *testing.T) {
	size := int64(-7)
	for _, tc := range []struct {
		name string
		r    abi.Resource
	}{
		{"minimal", abi.Resource{URI: "x://a", Name: "a"}},
		{"empty", abi.Resource{}},
		{"every field", abi.Resource{URI: "x://a b", Name: "n", Title: "T <&>", Description: "line\nbreak\ttab \"q\" \\",
			MimeType: "text/plain", Size: &size, Annotations: json.RawMessage(` { "priority" : 0.5 , "audience":["user"] } `),
			Icons: json.RawMessage("[\n{\"src\": \"a b\"}\n]")}},
		{"controls and unicode", abi.Resource{URI: "x://\x00\x01\x1f\x7f", Name: "é\u2028\u2029\U0001F600", Title: "bad \xff\xfe utf-8 \xe2\x80"}},
		{"raw null", abi.Resource{URI: "x://a", Name: "a", Annotations: json.RawMessage(`null`)}},
		{"invalid annotations", abi.Resource{URI: "x://a", Name: "a", Annotations: json.RawMessage(`{"a":}`)}},
		{"invalid icons", abi.Resource{URI: "x://a", Name: "a", Icons: json.RawMessage(`[1,]`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := encode(&tc.r)
			got, err := appendStaticResource(nil, &tc.r)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("err = %v, encoding/json's %v", err, wantErr)
			}
			if err == nil && string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// FuzzAppendString: appendString writes exactly what encoding/json writes
// (HTML escaping off) for any string, valid UTF-8 or not.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\b\f\n\r\t\x00\x1f\x7f", "<&>", "é\u2028\u2029\U0001F600", "\xff\xe2\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, encoding/json's %s", s, got, want)
		}
	})
}
