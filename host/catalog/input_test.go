package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/catalog/catalogtest"
)

var confirmSchema = json.RawMessage(`{"message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`)

// confirmer asks for confirmation (state pluginState) and records what it saw.
func confirmer(name string, seen *abi.Input) *catalogtest.Provider {
	return &catalogtest.Provider{
		M: abi.Manifest{Name: name, ABI: abi.Major, Schemes: []string{name},
			Tools: []abi.Tool{{Name: name + "_tool", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
		Tool: func(_ context.Context, r abi.CallToolRequest) (any, error) {
			*seen = r.Input
			if _, ok := r.InputResponses["confirm"]; ok && r.State == pluginState {
				return map[string]any{"content": []any{map[string]string{"type": "text", "text": "done"}}}, nil
			}
			return nil, &abi.InputRequired{State: pluginState, InputRequests: map[string]abi.InputRequest{
				"confirm": {Method: abi.InputElicit, Params: confirmSchema}}}
		},
	}
}

var elicitCaps = json.RawMessage(`{"elicitation":{}}`)

func call(s *catalog.Set, p abi.Principal, tool, args string, in *catalog.Input) (json.RawMessage, error) {
	return s.CallTool(context.Background(), catalog.Request{Principal: p, Input: in}, tool, json.RawMessage(args))
}

// firstRound returns the sealed requestState of a first call.
func firstRound(t *testing.T, s *catalog.Set, p abi.Principal, tool, args string) string {
	t.Helper()
	_, err := call(s, p, tool, args, &catalog.Input{Capabilities: elicitCaps})
	var ir *catalog.InputRequiredError
	if !errors.As(err, &ir) {
		t.Fatalf("first round: %v, want input required", err)
	}
	var res struct {
		InputRequests map[string]abi.InputRequest `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
	}
	if err := json.Unmarshal(ir.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.InputRequests["confirm"].Method != abi.InputElicit || res.RequestState == "" {
		t.Fatalf("first round result %s", ir.Result)
	}
	if strings.Contains(res.RequestState, pluginState) {
		t.Errorf("the plugin's state is readable in the requestState %q", res.RequestState)
	}
	return res.RequestState
}

func strp(s string) *string { return &s }

// pluginState is the state a confirmer hands the host: long enough that a
// sealed requestState never contains it by chance (as "s1" did, in about
// one run in twenty).
const pluginState = "plugin-state-s1"

func TestInputRequiredRoundTrip(t *testing.T) {
	var seen abi.Input
	now := time.Unix(1_000_000, 0)
	s := mustSet(t, catalog.Options{Now: func() time.Time { return now }, StateTTL: time.Minute},
		confirmer("a", &seen), confirmer("b", new(abi.Input)))
	alice := abi.Principal{ID: "alice"}
	state := firstRound(t, s, alice, "a_tool", `{"x":1,"y":2}`)
	yes := json.RawMessage(`{"confirm":{"action":"accept","content":{"ok":true}},"extra":{"action":"accept"}}`)

	// The right retry completes; keys the plugin did not ask for are dropped.
	if _, err := call(s, alice, "a_tool", `{"y":2, "x":1}`, &catalog.Input{Capabilities: elicitCaps, Responses: yes, State: &state}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if _, extra := seen.InputResponses["extra"]; extra || seen.State != pluginState {
		t.Errorf("plugin saw %+v", seen)
	}

	// Everything else is refused as invalid params.
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	bad := []struct {
		name  string
		p     abi.Principal
		tool  string
		args  string
		state string
		at    time.Time
	}{
		{"tampered", alice, "a_tool", `{"x":1,"y":2}`, string(tampered), now},
		{"appended", alice, "a_tool", `{"x":1,"y":2}`, state + "-TAMPERED", now},
		{"non-canonical encoding", alice, "a_tool", `{"x":1,"y":2}`, state[:4] + "\r\n" + state[4:], now},
		{"another principal", abi.Principal{ID: "mallory"}, "a_tool", `{"x":1,"y":2}`, state, now},
		{"another group set", abi.Principal{ID: "alice", Groups: []string{"admin"}}, "a_tool", `{"x":1,"y":2}`, state, now},
		{"other arguments", alice, "a_tool", `{"x":1,"y":3}`, state, now},
		{"another plugin", alice, "b_tool", `{"x":1,"y":2}`, state, now},
		{"expired", alice, "a_tool", `{"x":1,"y":2}`, state, now.Add(2 * time.Minute)},
		{"garbage", alice, "a_tool", `{"x":1,"y":2}`, "!!", now},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			saved := now
			now = tt.at
			defer func() { now = saved }()
			_, err := call(s, tt.p, tt.tool, tt.args, &catalog.Input{Capabilities: elicitCaps, Responses: yes, State: strp(tt.state)})
			if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInvalidParams {
				t.Fatalf("err = %v, want invalid params", err)
			}
		})
	}
}

func TestInputRequiredNeedsCapability(t *testing.T) {
	s := mustSet(t, catalog.Options{}, confirmer("a", new(abi.Input)))
	tests := []struct {
		name string
		in   *catalog.Input
		want string // requiredCapabilities
	}{
		{"no capabilities", &catalog.Input{Capabilities: json.RawMessage(`{}`)}, `{"elicitation":{}}`},
		{"other capabilities", &catalog.Input{Capabilities: json.RawMessage(`{"sampling":{}}`)}, `{"elicitation":{}}`},
		{"legacy request", nil, `{"elicitation":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(s, anon.Principal, "a_tool", `{}`, tt.in)
			var mc *catalog.MissingCapabilityError
			if !errors.As(err, &mc) {
				t.Fatalf("err = %v, want MissingCapabilityError", err)
			}
			if diff := cmp.Diff(tt.want, string(mc.Required)); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInputResponsesValidated(t *testing.T) {
	var seen abi.Input
	s := mustSet(t, catalog.Options{}, confirmer("a", &seen))
	tests := []struct {
		name      string
		responses string
		ok        bool
	}{
		{"elicit accept", `{"confirm":{"action":"accept","content":{"ok":true,"tags":["a"]}}}`, true},
		{"sampling", `{"q":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}}`, true},
		{"roots", `{"r":{"roots":[{"uri":"file:///x"}]}}`, true},
		{"null", `null`, false},
		{"array", `[]`, false},
		{"number answer", `{"confirm":12345}`, false},
		{"bad action", `{"confirm":{"action":"maybe"}}`, false},
		{"nested content", `{"confirm":{"action":"accept","content":{"x":{"y":1}}}}`, false},
		{"non-file root", `{"r":{"roots":[{"uri":"https://evil"}]}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(s, anon.Principal, "a_tool", `{}`, &catalog.Input{Capabilities: elicitCaps, Responses: json.RawMessage(tt.responses)})
			var ir *catalog.InputRequiredError
			switch {
			case tt.ok && !errors.As(err, &ir):
				t.Fatalf("err = %v, want the plugin to be asked (and ask again: no state)", err)
			case !tt.ok && (catalog.AsError(err) == nil || catalog.AsError(err).Kind != catalog.KindInvalidParams):
				t.Fatalf("err = %v, want invalid params", err)
			}
		})
	}
}

func TestInputRequestsFromPluginValidated(t *testing.T) {
	bad := map[string]abi.InputRequired{
		"empty":          {},
		"unknown method": {InputRequests: map[string]abi.InputRequest{"k": {Method: "tools/call"}}},
		"bad key":        {InputRequests: map[string]abi.InputRequest{"a b": {Method: abi.InputListRoot}}},
		"no message":     {InputRequests: map[string]abi.InputRequest{"k": {Method: abi.InputElicit, Params: json.RawMessage(`{"requestedSchema":{"type":"object","properties":{}}}`)}}},
		"no maxTokens":   {InputRequests: map[string]abi.InputRequest{"k": {Method: abi.InputSample, Params: json.RawMessage(`{"messages":[{}]}`)}}},
		"huge state":     {State: strings.Repeat("x", 1<<20)},
	}
	for name, ir := range bad {
		t.Run(name, func(t *testing.T) {
			p := &catalogtest.Provider{
				M: abi.Manifest{Name: "p", ABI: abi.Major, Schemes: []string{"p"},
					Tools: []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
				Tool: func(context.Context, abi.CallToolRequest) (any, error) { return nil, &ir },
			}
			s := mustSet(t, catalog.Options{}, p)
			_, err := call(s, anon.Principal, "t", `{}`, &catalog.Input{Capabilities: json.RawMessage(`{"elicitation":{},"sampling":{},"roots":{}}`)})
			if ce := catalog.AsError(err); ce == nil || ce.Kind != catalog.KindInternal {
				t.Fatalf("err = %v, want the plugin's invalid output", err)
			}
		})
	}
}
