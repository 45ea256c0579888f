package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/abi"
)

// Provider serves the resources, prompts and tools its manifest claims.
// A loaded Wasm plugin is a Provider; so is a native Go provider in tests.
//
// Call takes an operation's JSON request payload (abi.ListResourcesRequest,
// abi.ReadResourceRequest, …) and returns its JSON response payload. A
// provider-declared failure is returned as an *abi.Error; any other error
// is an internal failure of the provider.
type Provider interface {
	Manifest() *abi.Manifest
	Call(ctx context.Context, op abi.Op, req []byte) ([]byte, error)
}

// Digester is implemented by providers that can name their content (the
// sha256 of a plugin file). A Set's generation is derived from it, so
// replicas serving the same files agree on cursors.
type Digester interface {
	Digest() string
}

// OutputRejecter is implemented by providers that want to hear when the
// Set refused their output as invalid. A Wasm plugin counts it as a failed
// call (toward quarantine and in its metrics), just as it counts a trap.
type OutputRejecter interface {
	RejectOutput(op abi.Op, err error)
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
