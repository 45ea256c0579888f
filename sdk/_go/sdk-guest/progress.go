package corral

import "github.com/corral-mcp/corral/abi"

// Progress reports the progress of the call being served to the client
// that made the request, as notifications/progress on that request's own
// stream (ABI 1.1). total is the expected final value, or 0 when unknown;
// message may be empty. Each report must be greater than the previous one
// of the call. When the client asked for no progress the report is
// silently dropped and Progress returns nil. It needs no capability.
func Progress(progress, total float64, message string) error {
	return status(abi.FuncProgress, host.progress(progress, total, []byte(message)))
}
