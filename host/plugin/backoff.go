package plugin

import "time"

// Instance replacement backs off while a plugin fails call after call, so
// a crash-looping plugin cannot spend the host's CPU and memory (and its
// neighbours' latency) on instantiating replacements: after the second
// consecutive failure the replacement waits refillBase, doubling with
// every further failure up to refillMax. Any successful call resets it.
// Calls to the plugin meanwhile wait for an instance (or their deadline).
const (
	refillBase = time.Millisecond
	refillMax  = 250 * time.Millisecond
)

// refillDelay is how long to wait before replacing a failed instance.
func (p *Plugin) refillDelay() time.Duration {
	p.qmu.Lock()
	n := p.failures
	p.qmu.Unlock()
	if n < 2 {
		return 0
	}
	return min(refillBase<<min(n-2, 16), refillMax)
}
