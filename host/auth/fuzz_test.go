package auth

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMatch compares Match with a regular-expression reference.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"a*b", "axxb"}, {"*", ""}, {"issues://*", "issues://x/y"}, {"a*a*a*b", "aaaaaaaaaaaa"}, {"**", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 {
			return
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re, err := regexp.Compile(`^(?s:` + strings.Join(parts, ".*") + `)$`)
		if err != nil {
			return
		}
		// The reference works on runes; compare on valid UTF-8 only.
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return
		}
		if got, want := Match(pattern, s), re.MatchString(s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference %v", pattern, s, got, want)
		}
	})
}

// FuzzAuthenticate: no Authorization header value but the configured
// token (and a correctly signed JWT) authenticates, and nothing panics.
func FuzzAuthenticate(f *testing.F) {
	for _, s := range []string{"Bearer right-token", "Bearer wrong", "bearer right-token", "Basic abc", "Bearer a.b.c", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", ""} {
		f.Add(s)
	}
	a, err := New(Options{
		Tokens: []StaticToken{{SHA256: HashToken("right-token"), Principal: "p"}},
		JWT:    &JWTConfig{HMACSecret: []byte("0123456789abcdef0123456789abcdef")},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		p, err := a.Authenticate(r)
		if err != nil {
			return
		}
		scheme, tok, _ := strings.Cut(strings.TrimSpace(header), " ")
		if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) != "right-token" || p.ID != "p" {
			t.Fatalf("header %q authenticated as %+v", header, p)
		}
	})
}
