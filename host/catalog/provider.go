package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corral-mcp/corral/abi"
)

// Provider serves the resources, prompts and tools its manifest claims.
// A loaded Wasm plugin is a Provider; so is a native Go provider in tests.
// The whole contract between a Set and its providers is in this interface
// and in Call and Result: nothing travels beside it (no optional
// interfaces, no context values).
type Provider interface {
	// Manifest is the provider's self-description. It must not change.
	Manifest() *abi.Manifest
	// Digest names the provider's content (the sha256 of a plugin file),
	// or "" for a provider known by its manifest alone. A Set's generation
	// is derived from it, so replicas serving the same files agree on
	// cursors.
	Digest() string
	// Call serves one operation. A provider-declared answer, including a
	// declared failure or a request for client input, is a Result; an
	// error is the provider's own failure (a trap, a timeout, quarantine).
	Call(ctx context.Context, c Call) (Result, error)
	// RejectOutput tells the provider that the Set refused its Result for
	// op as invalid (malformed JSON, bad UTF-8 or base64, a URI outside its
	// claims, more items than asked for, …). A Wasm plugin counts it as a
	// failed call, toward quarantine and in its metrics, just as a trap.
	RejectOutput(op abi.Op, err error)
}

// Call is one operation a Set asks of a provider. It is passed by value so
// that a call costs no allocation.
type Call struct {
	// Op is the operation; Request is its JSON payload
	// (abi.ListResourcesRequest, abi.ReadResourceRequest, …).
	Op      abi.Op
	Request []byte
	// Principal is who asks, as the payload also says.
	Principal abi.Principal
	// Capabilities is the client's capabilities object, nil when the
	// request declared none (it is also in the payload's input member).
	Capabilities json.RawMessage
	// Sink receives the progress and log messages the call emits on behalf
	// of the request; nil when the request wants none.
	Sink Sink
	// Timeout, when positive, is the call's budget: a provider gives up
	// within it, as it would at its own deadline (which still applies when
	// shorter). A list request gives each provider Options.ListBudget. A
	// provider that must wake up first does not count the wake-up in it:
	// the provider bounds that itself (a plugin: by the compile budget).
	Timeout time.Duration
	// TaskDeadline, when positive, replaces the provider's own call
	// deadline: the call runs inside an MCP task whose tool declared a
	// deadline of its own (abi.Tool.TaskDeadlineMs). Timeout still applies
	// when shorter.
	TaskDeadline time.Duration
	// MayDefer says that the Set can answer without the provider (a list
	// page served from the PageCache): a provider that is asleep returns
	// ErrAsleep at once, having started to wake, instead of making the
	// call wait for its wake-up.
	MayDefer bool
}

// ErrAsleep is what a provider returns to a Call with MayDefer while it is
// asleep or waking up: it will answer the calls after its wake-up.
var ErrAsleep = errors.New("asleep: waking up")

// Result is a provider's answer to a Call: the status the provider
// returned and the JSON payload it goes with (abi.Status documents each).
// A request for client input comes back here too, as
// abi.StatusInputRequired; the Set validates it, seals its state and hands
// it up to the protocol layer, which asks the client.
type Result struct {
	Status abi.Status
	Body   []byte
	// Denied names a capability (abi.Cap*) the call asked for and was
	// refused because the operator did not grant it; "" when none was. A
	// declared failure after such a refusal is the operator's choice, not
	// the provider's fault: it does not count toward quarantine.
	Denied string
}

// Request is what the protocol layer passes down with one request, beside
// the method's own parameters: who asks, where the providers' progress and
// log messages go, and the request's input members (input_required).
type Request struct {
	Principal abi.Principal
	// Sink receives progress and log messages; nil: none wanted.
	Sink Sink
	// Input carries the request's input_required members; nil when the
	// request has none (it may then not be answered with input_required).
	Input *Input
	// TaskDeadline is Call.TaskDeadline for the call this request makes.
	TaskDeadline time.Duration
}

// Kind classifies an Error for the protocol layer, which maps it to a
// JSON-RPC code depending on the protocol era.
type Kind int

// Kinds of Error.
const (
	// KindInvalidParams: the request is malformed or names something that
	// cannot exist (bad URI, bad cursor, missing prompt argument).
	KindInvalidParams Kind = iota + 1
	// KindResourceNotFound: no provider has the resource; URI is set.
	KindResourceNotFound
	// KindUnknownName: no provider has the prompt, tool or completion ref;
	// Name is set.
	KindUnknownName
	// KindInternal: a provider failed, trapped, timed out, returned invalid
	// output or is quarantined; Plugin is set.
	KindInternal
)

// Error is a request failure with enough detail for a specific JSON-RPC
// error: the offending URI or name, and the plugin at fault.
type Error struct {
	Kind    Kind
	Message string // one concise sentence, safe to show a client
	URI     string // the URI the request named, if any
	Name    string // the prompt, tool or argument name, if any
	Plugin  string // the provider that failed, for KindInternal
	Err     error  // the cause, for logs; never shown to clients
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Message
	if e.Plugin != "" {
		msg = "plugin " + e.Plugin + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns err as an *Error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

func invalidParams(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidParams, Message: fmt.Sprintf(format, args...)}
}
