package mcp

import (
	"encoding/json"
	"errors"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
)

// requestInput returns the request's input_required members (client
// capabilities, inputResponses, requestState) for the three methods that
// may answer input_required, on the 2026-07-28 protocol only, else nil. A
// legacy request carries none here; the 2025 input bridge (bridge.go)
// gives the session's capabilities instead.
func requestInput(m *Message, e era) *catalog.Input {
	if e != eraModern || m.p.Meta == nil {
		return nil
	}
	switch m.Method {
	case "resources/read", "prompts/get", "tools/call":
		return &catalog.Input{
			Capabilities: m.p.Meta.ClientCapabilities,
			Responses:    m.p.InputResponses,
			State:        m.p.RequestState,
		}
	}
	return nil
}

// failed answers a failed resources/read, prompts/get or tools/call: an
// InputRequiredResult when the provider needs client input, -32021 when
// that input needs a capability the request did not declare, else the
// mapped error.
func (s *Server) failed(err error, m *Message, e era) ([]byte, *Error) {
	var me *Error
	if errors.As(err, &me) {
		return nil, me // from the 2025 input bridge
	}
	var ir *catalog.InputRequiredError
	if errors.As(err, &ir) && e == eraModern {
		return s.result(m.ID, e, len(ir.Result)+64+len(s.metaField), func(b []byte) []byte {
			b = append(b, `{"resultType":"input_required",`...)
			b = append(b, ir.Result[1:len(ir.Result)-1]...) // the members of the object
			return s.closeResult(b, e, false, 0, false)
		}), nil
	}
	var mc *catalog.MissingCapabilityError
	if errors.As(err, &mc) {
		if e != eraModern {
			return nil, errorWithData(CodeInvalidRequest,
				"Invalid Request: this request needs input from the client through capabilities the session did not declare at initialize.",
				struct {
					RequiredCapabilities json.RawMessage `json:"requiredCapabilities"`
				}{mc.Required})
		}
		return nil, errorWithData(CodeMissingClientCapability, "Missing required client capability",
			struct {
				RequiredCapabilities json.RawMessage `json:"requiredCapabilities"`
			}{mc.Required})
	}
	return nil, s.mapError(err, m, e)
}

// canSee reports whether p may see uri under the current Set's policy.
func (s *Server) canSee(p abi.Principal, uri string) bool {
	if p.ID == "" {
		p = catalog.Anonymous()
	}
	set := s.current()
	return set == nil || set.Visible(p, uri)
}

// visibleURIs keeps the URIs p may see: a subscription to a hidden
// resource is acknowledged (hidden answers like missing) but never
// notified, so updates cannot reveal it.
func (s *Server) visibleURIs(p abi.Principal, uris []string) []string {
	var out []string
	for _, u := range uris {
		if s.canSee(p, u) {
			out = append(out, u)
		}
	}
	return out
}
