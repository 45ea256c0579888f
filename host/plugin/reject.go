package plugin

import "github.com/corral-mcp/corral/abi"

// RejectOutput records that the catalog refused this plugin's output for
// op (invalid UTF-8, bad base64, a URI outside its schemes, …): the call
// counts as a failure toward quarantine and in the metrics, like a trap.
// It implements catalog.Provider.
func (p *Plugin) RejectOutput(op abi.Op, err error) {
	p.log.Warn("plugin output rejected", "op", op.String(), "err", err)
	p.obs.Rejected(p.name, op.String())
	// The call was recorded as a success, which cleared the run of
	// failures; a rejected output continues that run instead.
	p.qmu.Lock()
	p.failures += p.okReset
	p.okReset = 0
	p.qmu.Unlock()
	p.record(ClassBadOutput)
}
