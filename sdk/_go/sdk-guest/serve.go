package corral

import "github.com/corral-mcp/corral/abi"

// served is the plugin that corral_call dispatches to.
var served *Plugin

// Serve makes p the plugin this module serves. Call it once, from an init
// function. Registration mistakes are reported to the host: every call then
// fails with an internal error naming them, so the plugin is refused at
// load with a clear message.
func Serve(p *Plugin) {
	_ = p.seal()
	served = p
}

// call runs one operation on the served plugin.
func call(op abi.Op, req []byte) (abi.Status, []byte) {
	if served == nil {
		return abi.StatusError, []byte(`{"code":"internal","message":"corral: no plugin served (call corral.Serve from init)"}`)
	}
	return served.Handle(op, req)
}
