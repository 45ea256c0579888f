package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/corral-mcp/corral/host/catalog"
)

// mapError turns a catalog failure into the JSON-RPC error of the request's
// era. Causes are logged, never sent: a client sees only the catalog's
// client-safe message and the offending URI, name or plugin.
func (s *Server) mapError(err error, m *Message, e era) *Error {
	if errors.Is(err, context.Canceled) {
		// Serve sends nothing when the request's own context is done.
		return &Error{Code: CodeInternalError, Message: "Request cancelled."}
	}
	ce := catalog.AsError(err)
	if ce == nil {
		s.log.Error("mcp: request failed", "method", m.Method, "err", err)
		return &Error{Code: CodeInternalError, Message: "Internal error."}
	}
	switch ce.Kind {
	case catalog.KindResourceNotFound:
		code := CodeInvalidParams
		if e == eraLegacy {
			code = CodeResourceNotFoundLegacy
		}
		return errorWithData(code, "Resource not found", map[string]string{"uri": ce.URI})
	case catalog.KindUnknownName:
		return errorWithData(CodeInvalidParams, orDefault(ce.Message, "Unknown name."), map[string]string{"name": ce.Name})
	case catalog.KindInvalidParams:
		s.log.Debug("mcp: invalid params", "method", m.Method, "err", err)
		var data any
		switch {
		case ce.URI != "":
			data = map[string]string{"uri": ce.URI}
		case ce.Name != "":
			data = map[string]string{"name": ce.Name}
		}
		return errorWithData(CodeInvalidParams, orDefault(ce.Message, "Invalid params."), data)
	default:
		s.log.Error("mcp: request failed", "method", m.Method, "plugin", ce.Plugin, "err", err)
		var data any
		if ce.Plugin != "" {
			data = map[string]string{"plugin": ce.Plugin}
		}
		return errorWithData(CodeInternalError, orDefault(ce.Message, "Internal error."), data)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// spliceResult turns a catalog result object into the result to send: for
// modern results, resultType first and serverInfo in _meta. The common case
// (no resultType or _meta of its own) is a byte splice; otherwise only the
// top level is re-encoded, member values stay as they are.
func spliceResult(raw json.RawMessage, modern bool, serverInfo []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, fmt.Errorf("mcp: result is not a JSON object")
	}
	if !modern {
		return raw, nil
	}
	if inner, ok := plainResult(raw); ok {
		out := make([]byte, 0, len(raw)+len(serverInfo)+96)
		out = append(out, `{"resultType":"complete"`...)
		if len(inner) > 0 {
			out = append(out, ',')
			out = append(out, inner...)
		}
		out = append(out, `,"_meta":{"io.modelcontextprotocol/serverInfo":`...)
		out = append(out, serverInfo...)
		return append(out, "}}"...), nil
	}
	return reencodeResult(raw, serverInfo)
}

// plainResult returns the members of a result object (trimmed, between
// its braces) when it has no resultType or _meta of its own, so that a
// modern result is a byte splice.
func plainResult(raw json.RawMessage) (inner []byte, ok bool) {
	if bytes.Contains(raw, []byte(`"resultType"`)) || bytes.Contains(raw, []byte(`"_meta"`)) {
		return nil, false
	}
	return bytes.TrimSpace(raw[1 : len(raw)-1]), true
}

// reencodeResult is spliceResult for a modern result with a resultType or
// _meta of its own: only the top level is re-encoded.
func reencodeResult(raw json.RawMessage, serverInfo []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("mcp: decode result: %w", err)
	}
	meta := map[string]json.RawMessage{}
	if m, ok := top["_meta"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("mcp: decode result _meta: %w", err)
		}
	}
	meta["io.modelcontextprotocol/serverInfo"] = serverInfo
	delete(top, "_meta")
	delete(top, "resultType")
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := append(make([]byte, 0, len(raw)+len(serverInfo)+96), `{"resultType":"complete"`...)
	for _, k := range keys {
		out = append(out, ',')
		out = appendString(out, k)
		out = append(out, ':')
		out = append(out, top[k]...)
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("mcp: encode result _meta: %w", err)
	}
	out = append(out, `,"_meta":`...)
	out = append(out, mb...)
	return append(out, '}'), nil
}
