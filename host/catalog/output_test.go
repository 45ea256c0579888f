package catalog

import (
	"context"
	"strings"
	"testing"
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
			rr, err := s.ReadResource(context.Background(), anonymous, "fz://a")
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
			_, err := s.ReadResource(context.Background(), anonymous, "fz://a")
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
