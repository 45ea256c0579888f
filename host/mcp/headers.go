package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// HeaderParamPrefix starts the HTTP headers that mirror tool arguments
// (spec 2026-07-28 basic/transports §Streamable HTTP, custom headers).
const HeaderParamPrefix = "Mcp-Param-"

var (
	errBadBase64   = errors.New("mcp: invalid base64 in header value")
	errBadHeaderCh = errors.New("mcp: header value has characters outside visible ASCII")
)

// DecodeHeaderValue decodes one MCP header value: surrounding whitespace is
// dropped, and a value of the form =?base64?<standard base64>?= is decoded
// to the UTF-8 text it carries. A plain value must be printable ASCII; an
// encoded value must be valid base64 of valid UTF-8.
func DecodeHeaderValue(v string) (string, error) {
	v = strings.Trim(v, " \t")
	const pre, suf = "=?base64?", "?="
	if len(v) >= len(pre)+len(suf) && strings.HasPrefix(v, pre) && strings.HasSuffix(v, suf) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(suf)])
		if err != nil || !utf8.Valid(b) {
			return "", errBadBase64
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", errBadHeaderCh
		}
	}
	return v, nil
}

// HeaderMismatch returns the -32020 error of a header that disagrees with
// the request body; msg says which header and how.
func HeaderMismatch(msg string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + msg}
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// the arguments they mirror: an argument present in the body (and not
// null) needs its header, once, equal to it after decoding; integers
// compare numerically, booleans as true/false. It runs only once the tool
// is known to be visible to the caller, so that the headers of a hidden
// tool are never looked at: a hidden tool answers like a missing one.
func checkParamHeaders(h http.Header, args json.RawMessage, params []catalog.ParamHeader) *Error {
	if len(params) == 0 {
		return nil
	}
	body := map[string][]byte{}
	if len(args) > 0 {
		d := jsonread.NewDecoder(args)
		d.Map("arguments", func(key []byte) { body[string(key)] = d.Skip() })
		if err := d.End(); err != nil {
			if _, ok := err.(*jsonread.MemberError); ok {
				// The strict request reader refuses this first; a
				// repeated argument must never be checked by one copy
				// and run with the other.
				return &Error{Code: CodeInvalidParams, Message: "Invalid params: " + err.Error() + "."}
			}
			return nil // the arguments are invalid; the tool answers that
		}
	}
	for _, p := range params {
		raw, ok := body[p.Param]
		if !ok || string(raw) == "null" {
			continue
		}
		name := HeaderParamPrefix + p.Header
		vals := h.Values(name)
		if len(vals) != 1 {
			return HeaderMismatch(name + " header must appear once when " + p.Param + " is in the arguments.")
		}
		got, err := DecodeHeaderValue(vals[0])
		if err != nil {
			return HeaderMismatch(name + " header value is malformed.")
		}
		if !paramEqual(p.Type, raw, got) {
			return HeaderMismatch(name + " header does not match the request body.")
		}
	}
	return nil
}

// paramEqual compares a mirrored header value with the JSON argument.
func paramEqual(typ string, raw []byte, header string) bool {
	d := jsonread.NewDecoder(raw)
	switch typ {
	case "string":
		s := d.String("")
		return d.End() == nil && s.String() == header
	case "boolean":
		b, ok := d.Bool("")
		return ok && d.End() == nil && strconv.FormatBool(b) == header
	case "integer":
		n := d.Num("")
		if d.End() != nil {
			return false
		}
		a, err1 := strconv.ParseFloat(string(n), 64)
		b, err2 := strconv.ParseFloat(header, 64)
		return err1 == nil && err2 == nil && a == b
	}
	return false
}
