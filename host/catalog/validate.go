package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Validation of provider output. A provider is untrusted: whatever it
// returns is decoded into the exact MCP shape, checked, and re-encoded, so
// a client only ever sees well-formed JSON with valid UTF-8 text, valid
// base64 and URIs inside the provider's own schemes. Re-encoding also drops
// unknown fields, so what was checked is what is sent.
//
// Decoding is one pass of the host's strict reader (read.go) that checks
// syntax and UTF-8 as it goes, refuses repeated and case-folded member
// names, and keeps each string's bytes; re-encoding appends those bytes
// (output.go). On output without repeated or case-folded names the result
// decodes to exactly what encoding/json would have decoded and re-encoded
// (the Fuzz*Output targets hold the two side by side).

// errOutput marks invalid provider output.
var errOutput = errors.New("invalid output")

func outputErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errOutput, fmt.Sprintf(format, args...))
}

// encode marshals v without HTML escaping.
func encode(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// notBase64[c] is 1 for the bytes outside standard base64's alphabet.
var notBase64 = func() (t [256]byte) {
	for c := range t {
		t[c] = 1
	}
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = 0
	}
	return t
}()

// validBase64 reports whether s is padded standard base64: a multiple of
// four characters, '=' only as the last one or two.
func validBase64[T string | []byte](s T) bool {
	n := len(s)
	if n%4 != 0 {
		return false
	}
	if n > 0 && s[n-1] == '=' {
		if n--; s[n-1] == '=' {
			n--
		}
	}
	var bad byte // branch-free: one OR per byte
	for i := 0; i < n; i++ {
		bad |= notBase64[s[i]]
	}
	return bad == 0
}

// isObject reports whether raw is absent or a JSON object.
func isObject(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func checkAnnotations(a *annotations) error {
	if a == nil {
		return nil
	}
	for _, r := range a.Audience {
		if !r.Is("user") && !r.Is("assistant") {
			return outputErr("annotations.audience has %q", r.String())
		}
	}
	if p := a.Priority; p.ok && (p.v < 0 || p.v > 1) {
		return outputErr("annotations.priority %v outside 0..1", p.v)
	}
	return nil
}

func checkIcons(icons []icon) error {
	for i := range icons {
		ic := &icons[i]
		if ic.Src.Empty() {
			return outputErr("icon without src")
		}
		if !ic.Theme.Empty() && !ic.Theme.Is("light") && !ic.Theme.Is("dark") {
			return outputErr("icon theme %q", ic.Theme.String())
		}
	}
	return nil
}

// checkResource validates r against the owner's schemes.
func (pr *provider) checkResource(r *resource) (uri string, err error) {
	uri = r.URI.String()
	if r.Name.Empty() {
		return "", outputErr("resource %q has no name", uri)
	}
	if err := pr.checkOwnURI(uri); err != nil {
		return "", err
	}
	if r.Size != nil && *r.Size < 0 {
		return "", outputErr("resource %q has a negative size", uri)
	}
	if !isObject(r.Meta) {
		return "", outputErr("resource %q: _meta is not an object", uri)
	}
	if err := checkAnnotations(r.Annotations); err != nil {
		return "", err
	}
	return uri, checkIcons(r.Icons)
}

// checkOwnURI checks that uri is valid and inside the provider's schemes.
func (pr *provider) checkOwnURI(uri string) error {
	scheme, err := ValidateURI(uri)
	if err != nil {
		return outputErr("URI %q is not valid", uri)
	}
	if !slices.Contains(pr.schemes, scheme) {
		return outputErr("URI %q is outside the plugin's schemes %v", uri, pr.schemes)
	}
	return nil
}

// blobOK reports whether s is valid padded base64.
func blobOK(s jstr) bool {
	if s.Escaped() {
		return validBase64(s.String())
	}
	return validBase64(s.Raw[1 : len(s.Raw)-1])
}

// checkContents validates c. known is a URI already found valid and
// inside pr's schemes (the one read), or "": contents naming it need no
// second parse.
func (pr *provider) checkContents(c *resourceContents, known string) (size int, err error) {
	uri := known
	if known == "" || !c.URI.Is(known) {
		uri = c.URI.String()
		if err := pr.checkOwnURI(uri); err != nil {
			return 0, err
		}
	}
	switch {
	case c.Text.Present() && c.Blob.Present():
		return 0, outputErr("contents of %q have both text and blob", uri)
	case c.Text.Present():
		size = c.Text.Len()
	case c.Blob.Present():
		if !blobOK(c.Blob) {
			return 0, outputErr("contents of %q: blob is not valid base64", uri)
		}
		size = c.Blob.Len()
	default:
		return 0, outputErr("contents of %q have neither text nor blob", uri)
	}
	if !isObject(c.Meta) {
		return 0, outputErr("contents of %q: _meta is not an object", uri)
	}
	return size, nil
}

func (pr *provider) checkBlock(b *contentBlock) error {
	if err := checkAnnotations(b.Annotations); err != nil {
		return err
	}
	if !isObject(b.Meta) {
		return outputErr("content block: _meta is not an object")
	}
	switch t := b.Type; {
	case t.Is("text"):
		if !b.Text.Present() || b.Data.Present() || b.Resource != nil || !b.URI.Empty() {
			return outputErr("text content must carry only text")
		}
	case t.Is("image"), t.Is("audio"):
		if !b.Data.Present() || b.MimeType.Empty() || b.Text.Present() || b.Resource != nil || !b.URI.Empty() {
			return outputErr("%s content needs data and mimeType only", t.String())
		}
		if !blobOK(b.Data) {
			return outputErr("%s content: data is not valid base64", t.String())
		}
	case t.Is("resource_link"):
		if b.URI.Empty() || b.Name.Empty() || b.Text.Present() || b.Data.Present() || b.Resource != nil {
			return outputErr("resource_link needs uri and name only")
		}
		if uri := b.URI.String(); !validURI(uri) {
			return outputErr("resource_link URI %q is not valid", uri)
		}
		return checkIcons(b.Icons)
	case t.Is("resource"):
		if b.Resource == nil || b.Text.Present() || b.Data.Present() || !b.URI.Empty() {
			return outputErr("resource content needs an embedded resource only")
		}
		_, err := pr.checkContents(b.Resource, "")
		return err
	default:
		return outputErr("unknown content type %q", t.String())
	}
	return nil
}

func validURI(uri string) bool {
	_, err := ValidateURI(uri)
	return err == nil
}

// checkDeclared checks the annotations and icons a manifest declares for
// a listed item against MCP's shapes, as a provider's listed items are
// checked (a manifest is provider output too). Either may be absent.
func checkDeclared(rawAnnotations, rawIcons json.RawMessage) error {
	if len(rawAnnotations) > 0 {
		var a *annotations
		d := newDec(rawAnnotations)
		d.annotations(&a)
		if err := d.end(); err != nil {
			return fmt.Errorf("annotations: %w", err)
		}
		if err := checkAnnotations(a); err != nil {
			return err
		}
	}
	if len(rawIcons) > 0 {
		d := newDec(rawIcons)
		icons := slice(d, nil, "icons", d.icon)
		if err := d.end(); err != nil {
			return fmt.Errorf("icons: %w", err)
		}
		if err := checkIcons(icons); err != nil {
			return err
		}
	}
	return nil
}
