package catalog

import (
	"net/url"
	"strings"
	"testing"
)

func TestValidateURI(t *testing.T) {
	tests := []struct {
		uri    string
		scheme string // "" = refused
	}{
		{"test://static-text", "test"},
		{"Test+x.y-z://a/b?c#d", "test+x.y-z"},
		{"issues://42", "issues"},
		{"file:///home/me/notes.md", "file"},
		{"file://localhost/home/me/notes.md", "file"},
		{"file:///home/me/a%20b.md", "file"},
		{"urn:isbn:0451450523", "urn"},
		{"", ""},
		{"no scheme", ""},
		{"://x", ""},
		{"1abc://x", ""},
		{"a b://x", ""},
		{"test://a\nb", ""},
		{"test://a\x00b", ""},
		{"test://{x}", ""},
		{"file:///etc/../passwd", ""},
		{"file:///etc/%2e%2e/passwd", ""},
		{"file:///etc/%2E%2E/passwd", ""},
		{"file:///etc/./passwd", ""},
		{"file:///a/..", ""},
		{"file:///etc%2fpasswd", ""},
		{"file:///etc%5cpasswd", ""},
		{"file:///a%00b", ""},
		{"file://evil.example/etc/passwd", ""},
		{"file:relative/path", ""},
		{"file:///a//b", ""},
		{"file:///a?x=1", ""},
		{"test://" + strings.Repeat("a", MaxURILength), ""},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := ValidateURI(tt.uri)
			if tt.scheme == "" {
				ce := AsError(err)
				if ce == nil || ce.Kind != KindInvalidParams || ce.URI != tt.uri {
					t.Fatalf("accepted (scheme %q, err %v); want a refusal naming the URI", got, err)
				}
				return
			}
			if err != nil || got != tt.scheme {
				t.Fatalf("got %q, %v; want %q", got, err, tt.scheme)
			}
		})
	}
}

// FuzzValidateURI checks that an accepted file:// URI never names a path
// that escapes through dot segments once decoded, and that validation
// never panics.
func FuzzValidateURI(f *testing.F) {
	for _, s := range []string{"file:///a/b", "file:///a/%2e%2e/b", "test://x", "file://localhost/a", "a:b", "file:///%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		scheme, err := ValidateURI(uri)
		if err != nil || scheme != "file" {
			return
		}
		u, perr := url.Parse(uri)
		if perr != nil {
			t.Fatalf("accepted an unparsable URI %q", uri)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("accepted %q with a dot segment in %q", uri, u.Path)
			}
		}
		if !strings.HasPrefix(u.Path, "/") || strings.ContainsRune(u.Path, 0) {
			t.Fatalf("accepted %q with path %q", uri, u.Path)
		}
	})
}
