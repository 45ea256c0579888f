package plugin

import (
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/abi"
)

// Error is a host-level failure of a plugin call or load: it names the
// plugin and classifies the failure. A guest-declared failure is returned
// as *abi.Error instead.
type Error struct {
	Plugin string
	Op     abi.Op // 0 when not tied to an operation
	Class  ErrorClass
	Err    error
}

// Error implements error.
func (e *Error) Error() string {
	msg := "plugin " + e.Plugin
	if e.Op != 0 {
		msg += ": " + e.Op.String()
	}
	msg += ": " + string(e.Class)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the call ran past its deadline.
func (e *Error) Timeout() bool { return e.Class == ClassTimeout }

// ErrHost marks a failure that is the host's, not the plugin's: the
// compilation cache could not be read or repaired, say. A plugin failing
// for it would serve on a healthy host, so the server is not ready while
// it lasts.
var ErrHost = errors.New("host failure")

// ErrQuarantined is the cause of calls refused during quarantine.
var ErrQuarantined = errors.New("quarantined after repeated failures")

// ErrClosed is the cause of calls on a closed plugin.
var ErrClosed = errors.New("plugin closed")

// abiViolation is how a host function reports a contract breach by the
// guest; it panics with it, which traps the guest.
type abiViolation struct {
	fn  string
	msg string
}

func (v *abiViolation) Error() string { return fmt.Sprintf("abi violation in %s: %s", v.fn, v.msg) }

func violate(fn, format string, args ...any) {
	panic(&abiViolation{fn: fn, msg: fmt.Sprintf(format, args...)})
}
