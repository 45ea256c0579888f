package catalog

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
	"github.com/corral-mcp/corral/host/keys"
)

// DefaultStateTTL is how long a sealed requestState stays valid.
const DefaultStateTTL = 10 * time.Minute

// Limits on what a provider may ask of a client in one InputRequired.
const (
	maxInputRequests = 16
	maxStateBytes    = 16 << 10 // a provider's own state, before sealing
)

// Input is what a request carries for input_required (MRTR): on the
// 2026-07-28 protocol its own members, on a bridged 2025-11-25 session the
// session's capabilities and the answers the bridge collected. The protocol
// layer passes it in Request.Input; ReadResource, GetPrompt and CallTool
// use it.
type Input struct {
	// Capabilities is the request's clientCapabilities object.
	Capabilities json.RawMessage
	// Responses is the raw inputResponses member, nil when absent.
	Responses json.RawMessage
	// State is the requestState member, nil when absent.
	State *string
}

// InputRequiredError is returned by ReadResource, GetPrompt and CallTool
// when the provider needs client input. Result is the InputRequiredResult
// object to send, without resultType: {"inputRequests":…,"requestState":…}.
type InputRequiredError struct {
	Result json.RawMessage
}

// Error implements error.
func (e *InputRequiredError) Error() string { return "catalog: input required" }

// MissingCapabilityError is returned when a provider asked for input the
// request's client capabilities do not allow (or, on the 2025 protocol,
// for any input at all). Required is a ClientCapabilities object naming
// what is missing, e.g. {"sampling":{}}.
type MissingCapabilityError struct {
	Required json.RawMessage
}

// Error implements error.
func (e *MissingCapabilityError) Error() string {
	return "catalog: the request needs client capabilities " + string(e.Required)
}

// sealedState is the plaintext of a requestState.
type sealedState struct {
	Plugin string            `json:"p"`
	Digest []byte            `json:"d"` // binds principal, op, target, arguments
	Expiry int64             `json:"e"` // unix seconds
	Keys   map[string]string `json:"k"` // input request key -> method
	State  string            `json:"s"` // the provider's own state
}

// stateAADv1 authenticated a requestState of format 1 (see openV1State).
const stateAADv1 = "corral requestState v1"

func (s *Set) stateTTL() time.Duration {
	if s.opts.StateTTL > 0 {
		return s.opts.StateTTL
	}
	return DefaultStateTTL
}

func (s *Set) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Set) seal(st *sealedState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("catalog: seal state: %w", err)
	}
	return s.keys.Seal(keys.RequestState, plain), nil
}

var errBadState = &Error{Kind: KindInvalidParams, Message: "invalid requestState: it was altered, has expired or belongs to another request"}

// open verifies and decrypts a requestState for pr and digest.
func (s *Set) open(state string, pr *provider, digest []byte) (*sealedState, error) {
	plain, err := s.keys.Open(keys.RequestState, state)
	if err != nil {
		var ok bool
		if plain, ok = s.openV1State(state); !ok {
			return nil, errBadState
		}
	}
	var st sealedState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, errBadState
	}
	if st.Plugin != pr.name || subtle.ConstantTimeCompare(st.Digest, digest) != 1 || s.now().Unix() > st.Expiry {
		return nil, errBadState
	}
	return &st, nil
}

// openV1State opens a requestState of format 1: base64url of nonce,
// ciphertext and tag, AES-256-GCM under SHA-256 of the secret. Its first
// byte is random, so it is tried whenever a token fails as format 2.
// Delete it one release after format 2.
func (s *Set) openV1State(state string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != state {
		return nil, false
	}
	return s.keys.OpenV1(raw, []byte(stateAADv1))
}

// requestDigest binds a state to who asked what: the principal, the
// operation, the URI or name, and the arguments (canonically encoded).
func requestDigest(p abi.Principal, op abi.Op, target string, args json.RawMessage) []byte {
	h := sha256.New()
	groups := append([]string(nil), p.Groups...)
	sort.Strings(groups)
	for _, part := range []string{p.ID, strings.Join(groups, "\x00"), op.String(), target} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	if t := bytes.TrimSpace(args); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var v any
		// Arguments repeating a name at any depth are bound as written:
		// encoding/json would keep the last copy, so that a state given for
		// {"a":{"k":1,"k":2}} (which a plugin may read as k=1) would also
		// open for {"a":{"k":2}}.
		if jsonread.CheckUnique(t) != nil {
			h.Write(t)
		} else if json.Unmarshal(t, &v) == nil {
			canon, _ := json.Marshal(v) // maps encode with sorted keys
			h.Write(canon)
		}
	}
	return h.Sum(nil)
}

// lazyDigest returns requestDigest's value, computed on first use: only
// requests that carry or are given a requestState need it.
func lazyDigest(p abi.Principal, op abi.Op, target string, args func() json.RawMessage) func() []byte {
	var sum []byte
	return func() []byte {
		if sum == nil {
			var a json.RawMessage
			if args != nil {
				a = args()
			}
			sum = requestDigest(p, op, target, a)
		}
		return sum
	}
}

// prepareInput checks the request's input members and returns what the
// provider is told.
func (s *Set) prepareInput(in *Input, pr *provider, digest func() []byte) (abi.Input, error) {
	if in == nil {
		return abi.Input{}, nil
	}
	out := abi.Input{ClientCapabilities: in.Capabilities}
	var keys map[string]string
	if in.State != nil {
		st, err := s.open(*in.State, pr, digest())
		if err != nil {
			return abi.Input{}, err
		}
		out.State, keys = st.State, st.Keys
	}
	if in.Responses == nil {
		return out, nil
	}
	var resp map[string]json.RawMessage
	if t := bytes.TrimSpace(in.Responses); len(t) == 0 || t[0] != '{' || jsonread.Unmarshal(t, &resp) != nil {
		return abi.Input{}, invalidParams("inputResponses must be an object")
	}
	out.InputResponses = make(map[string]json.RawMessage, len(resp))
	for k, v := range resp {
		method, asked := keys[k]
		if keys != nil && !asked {
			continue // not asked for: ignored, as the protocol requires
		}
		if err := checkInputResponse(method, v); err != nil {
			return abi.Input{}, &Error{Kind: KindInvalidParams, Message: fmt.Sprintf("inputResponses[%q]: %v", k, err), Name: k}
		}
		out.InputResponses[k] = v
	}
	return out, nil
}

// inputRequired validates a provider's InputRequired against the request's
// capabilities and turns it into the result to send, its state sealed.
func (s *Set) inputRequired(in *Input, pr *provider, op abi.Op, digest func() []byte, ir *abi.InputRequired) error {
	if err := checkInputRequests(ir); err != nil {
		return s.badOutput(pr, op, err)
	}
	var caps map[string]json.RawMessage
	if in != nil {
		_ = jsonread.Unmarshal(in.Capabilities, &caps)
	}
	missing := map[string]any{}
	keys := make(map[string]string, len(ir.InputRequests))
	for k, r := range ir.InputRequests {
		keys[k] = r.Method
		name, sub := requiredCapability(r)
		c, ok := caps[name]
		if !ok || !isObject(c) {
			missing[name] = requiredValue(sub)
			continue
		}
		if sub != "" {
			var m map[string]json.RawMessage
			if jsonread.Unmarshal(c, &m) != nil || m[sub] == nil {
				missing[name] = requiredValue(sub)
			}
		}
	}
	if in == nil || len(missing) > 0 {
		if in == nil && len(missing) == 0 {
			missing["elicitation"] = map[string]any{} // any input needs the 2026 protocol
		}
		b, _ := json.Marshal(missing)
		return &MissingCapabilityError{Required: b}
	}
	state, err := s.seal(&sealedState{
		Plugin: pr.name, Digest: digest(), Expiry: s.now().Add(s.stateTTL()).Unix(), Keys: keys, State: ir.State,
	})
	if err != nil {
		return &Error{Kind: KindInternal, Message: "Internal error.", Err: err}
	}
	res := struct {
		InputRequests map[string]abi.InputRequest `json:"inputRequests,omitempty"`
		RequestState  string                      `json:"requestState"`
	}{ir.InputRequests, state}
	b, err := json.Marshal(res)
	if err != nil {
		return s.badOutput(pr, op, err)
	}
	return &InputRequiredError{Result: b}
}

func requiredValue(sub string) map[string]any {
	if sub == "" {
		return map[string]any{}
	}
	return map[string]any{sub: map[string]any{}}
}

// requiredCapability names the client capability (and sub-capability)
// an input request needs.
func requiredCapability(r abi.InputRequest) (string, string) {
	switch r.Method {
	case abi.InputSample:
		return "sampling", ""
	case abi.InputListRoot:
		return "roots", ""
	}
	var p struct {
		Mode string `json:"mode"`
	}
	_ = jsonread.Unmarshal(r.Params, &p)
	if p.Mode == "url" {
		return "elicitation", "url"
	}
	return "elicitation", ""
}

var inputKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// checkInputRequests validates a provider's input requests.
func checkInputRequests(ir *abi.InputRequired) error {
	if len(ir.InputRequests) == 0 && ir.State == "" {
		return outputErr("input required with neither input requests nor state")
	}
	if len(ir.InputRequests) > maxInputRequests {
		return outputErr("%d input requests, the limit is %d", len(ir.InputRequests), maxInputRequests)
	}
	if len(ir.State) > maxStateBytes {
		return outputErr("state of %d bytes, the limit is %d", len(ir.State), maxStateBytes)
	}
	for k, r := range ir.InputRequests {
		if !inputKeyRE.MatchString(k) {
			return outputErr("input request key %q is not [A-Za-z0-9_.-]{1,64}", k)
		}
		if len(r.Params) > 0 && !isObject(r.Params) {
			return outputErr("input request %q: params is not an object", k)
		}
		switch r.Method {
		case abi.InputElicit:
			var p struct {
				Mode            string          `json:"mode"`
				Message         *string         `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
				URL             string          `json:"url"`
			}
			if err := jsonread.Unmarshal(r.Params, &p); err != nil || p.Message == nil {
				return outputErr("input request %q: elicitation needs a message", k)
			}
			switch p.Mode {
			case "", "form":
				var schema struct {
					Type       string          `json:"type"`
					Properties json.RawMessage `json:"properties"`
				}
				if jsonread.Unmarshal(p.RequestedSchema, &schema) != nil || schema.Type != "object" || !isObject(schema.Properties) {
					return outputErr("input request %q: requestedSchema must be an object schema with properties", k)
				}
			case "url":
				if !strings.HasPrefix(p.URL, "https://") && !strings.HasPrefix(p.URL, "http://") {
					return outputErr("input request %q: url elicitation needs an http(s) url", k)
				}
			default:
				return outputErr("input request %q: unknown elicitation mode %q", k, p.Mode)
			}
		case abi.InputSample:
			var p struct {
				Messages  []json.RawMessage `json:"messages"`
				MaxTokens *int              `json:"maxTokens"`
			}
			if err := jsonread.Unmarshal(r.Params, &p); err != nil || len(p.Messages) == 0 || p.MaxTokens == nil || *p.MaxTokens < 1 {
				return outputErr("input request %q: sampling needs messages and a positive maxTokens", k)
			}
		case abi.InputListRoot:
		default:
			return outputErr("input request %q: unknown method %q", k, r.Method)
		}
	}
	return nil
}

// checkInputResponse validates one client answer for method ("" when the
// retry carried no state, so the answer may be any of the three kinds).
func checkInputResponse(method string, v json.RawMessage) error {
	if !isObject(v) {
		return errors.New("not an object")
	}
	switch method {
	case abi.InputElicit:
		return checkElicitResult(v)
	case abi.InputSample:
		return checkSamplingResult(v)
	case abi.InputListRoot:
		return checkRootsResult(v)
	}
	if checkElicitResult(v) == nil || checkSamplingResult(v) == nil || checkRootsResult(v) == nil {
		return nil
	}
	return errors.New("not an ElicitResult, CreateMessageResult or ListRootsResult")
}

func checkElicitResult(v json.RawMessage) error {
	var r struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := jsonread.Unmarshal(v, &r); err != nil {
		return errors.New("malformed ElicitResult")
	}
	switch r.Action {
	case "accept", "decline", "cancel":
	default:
		return fmt.Errorf("ElicitResult action %q is not accept, decline or cancel", r.Action)
	}
	for k, c := range r.Content {
		var x any
		if jsonread.Unmarshal(c, &x) != nil {
			return fmt.Errorf("ElicitResult content %q is malformed", k)
		}
		switch x := x.(type) {
		case string, float64, bool:
		case []any:
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return fmt.Errorf("ElicitResult content %q: arrays hold strings only", k)
				}
			}
		default:
			return fmt.Errorf("ElicitResult content %q must be a string, number, boolean or string array", k)
		}
	}
	return nil
}

func checkSamplingResult(v json.RawMessage) error {
	var r struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Model   *string         `json:"model"`
	}
	if err := jsonread.Unmarshal(v, &r); err != nil || (r.Role != "user" && r.Role != "assistant") || len(r.Content) == 0 || r.Model == nil {
		return errors.New("not a CreateMessageResult (role, content, model)")
	}
	return nil
}

func checkRootsResult(v json.RawMessage) error {
	var r struct {
		Roots *[]struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if err := jsonread.Unmarshal(v, &r); err != nil || r.Roots == nil {
		return errors.New("not a ListRootsResult (roots)")
	}
	for _, root := range *r.Roots {
		if !strings.HasPrefix(root.URI, "file://") {
			return fmt.Errorf("root %q is not a file:// URI", root.URI)
		}
	}
	return nil
}
