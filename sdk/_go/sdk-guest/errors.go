package corral

import (
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/abi"
)

// NotFound returns an error saying the resource, prompt, tool or value a
// request named does not exist (abi.CodeNotFound). For a resource the host
// answers "resource not found" with the URI.
func NotFound(msg string) error { return &abi.Error{Code: abi.CodeNotFound, Message: msg} }

// InvalidParams returns an error saying the request's arguments are wrong
// (abi.CodeInvalidParams).
func InvalidParams(msg string) error {
	return &abi.Error{Code: abi.CodeInvalidParams, Message: msg}
}

// Internal returns an error saying the plugin failed (abi.CodeInternal).
func Internal(msg string) error { return &abi.Error{Code: abi.CodeInternal, Message: msg} }

// Unavailable returns an error saying a dependency is down and the request
// may be retried later (abi.CodeUnavailable).
func Unavailable(msg string) error {
	return &abi.Error{Code: abi.CodeUnavailable, Message: msg}
}

// Errors returned (wrapped) by the host capability helpers, one per
// abi.Errno value. Test them with errors.Is.
var (
	ErrDenied      = errors.New("permission denied")     // abi.ErrnoDenied
	ErrNotFound    = errors.New("not found")             // abi.ErrnoNotFound
	ErrInvalid     = errors.New("invalid argument")      // abi.ErrnoInvalid
	ErrQuota       = errors.New("quota exceeded")        // abi.ErrnoQuota
	ErrTooLarge    = errors.New("too large")             // abi.ErrnoTooLarge
	ErrIO          = errors.New("i/o error")             // abi.ErrnoIO
	ErrRateLimited = errors.New("rate limited")          // abi.ErrnoRateLimited
	ErrTimeout     = errors.New("timeout")               // abi.ErrnoTimeout
	ErrBadOutput   = errors.New("malformed host output") // the host's output did not decode
)

// errnoError wraps the sentinel for errno, naming the host function.
func errnoError(fn string, errno int32) error {
	var base error
	switch errno {
	case abi.ErrnoDenied:
		base = ErrDenied
	case abi.ErrnoNotFound:
		base = ErrNotFound
	case abi.ErrnoInvalid:
		base = ErrInvalid
	case abi.ErrnoQuota:
		base = ErrQuota
	case abi.ErrnoTooLarge:
		base = ErrTooLarge
	case abi.ErrnoIO:
		base = ErrIO
	case abi.ErrnoRateLimited:
		base = ErrRateLimited
	case abi.ErrnoTimeout:
		base = ErrTimeout
	default:
		return fmt.Errorf("corral: %s: %s", fn, abi.ErrnoString(errno))
	}
	return fmt.Errorf("corral: %s: %w", fn, base)
}

// toABIError maps a handler's error to the error the host receives. An
// *abi.Error (from NotFound, InvalidParams, …) passes through; the host
// errno sentinels map to the nearest code; anything else is internal.
func toABIError(err error) *abi.Error {
	var ae *abi.Error
	if errors.As(err, &ae) {
		if ae.Code == "" {
			return &abi.Error{Code: abi.CodeInternal, Message: ae.Message, Data: ae.Data}
		}
		return ae
	}
	code := abi.CodeInternal
	switch {
	case errors.Is(err, ErrNotFound):
		code = abi.CodeNotFound
	case errors.Is(err, ErrInvalid):
		code = abi.CodeInvalidParams
	case errors.Is(err, ErrIO), errors.Is(err, ErrTimeout), errors.Is(err, ErrRateLimited):
		code = abi.CodeUnavailable
	}
	return &abi.Error{Code: code, Message: err.Error()}
}

// message is the text of err for a tool result: an *abi.Error's message
// without its code prefix, or err.Error().
func message(err error) string {
	var ae *abi.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
