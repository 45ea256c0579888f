package plugin

import "time"

// ErrorClass classifies the outcome of a call for metrics and quarantine.
type ErrorClass string

// Error classes. Those marked "failure" count towards quarantine.
const (
	ClassOK          ErrorClass = "ok"
	ClassGuestError  ErrorClass = "guest_error" // the guest returned a well-formed abi.Error
	ClassTrap        ErrorClass = "trap"        // failure: the guest trapped or exited
	ClassTimeout     ErrorClass = "timeout"     // failure: the call's deadline passed
	ClassCanceled    ErrorClass = "canceled"    // the caller gave up
	ClassOversize    ErrorClass = "oversize"    // failure: the response was too large
	ClassBadOutput   ErrorClass = "bad_output"  // failure: no result, malformed JSON or a bad status
	ClassRequest     ErrorClass = "request"     // the request was too large
	ClassInstantiate ErrorClass = "instantiate" // failure: a new instance could not be created
	ClassQuarantined ErrorClass = "quarantined" // refused while quarantined
	ClassClosed      ErrorClass = "closed"      // the plugin was closed
	ClassAsleep      ErrorClass = "asleep"      // deferred while the plugin wakes up (catalog.Call.MayDefer)
)

// Failure reports whether the class counts towards quarantine.
func (c ErrorClass) Failure() bool {
	switch c {
	case ClassTrap, ClassTimeout, ClassOversize, ClassBadOutput, ClassInstantiate:
		return true
	}
	return false
}

// Observer receives events for metrics. Implementations must be safe for
// concurrent use and must not block.
type Observer interface {
	// Call is one Plugin.Call: its duration and outcome.
	Call(plugin string, op string, d time.Duration, class ErrorClass)
	// Instance reports an instance created (true) or discarded (false),
	// with the reason for a discard ("trap", "timeout", "recycle",
	// "close", …).
	Instance(plugin string, created bool, reason string)
	// Quarantine reports the plugin entering (true) or leaving (false)
	// quarantine.
	Quarantine(plugin string, on bool)
	// Rejected reports a call whose output the catalog refused as invalid
	// after the call itself had been recorded as a success.
	Rejected(plugin string, op string)
	// Denied reports a host-function call refused for lack of a grant or
	// outside it (a path, host or URI), or dropped by a rate limit.
	Denied(plugin string, capability string, reason string)
}

type nopObserver struct{}

func (nopObserver) Call(string, string, time.Duration, ErrorClass) {}
func (nopObserver) Instance(string, bool, string)                  {}
func (nopObserver) Quarantine(string, bool)                        {}
func (nopObserver) Denied(string, string, string)                  {}
func (nopObserver) Rejected(string, string)                        {}
