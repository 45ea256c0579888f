package plugin

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Giving memory back. What a plugin frees when it goes to sleep (its
// instances' bookkeeping, wazero's decoded module and the Go side of its
// compiled code) and what a start leaves behind (every plugin file read
// whole to be hashed, manifests decoded, catalogs built and dropped) is
// garbage in the Go heap, and an idle server allocates nothing: no garbage
// collection runs to find it (the runtime forces one only every two
// minutes), wazero unmaps a module's executable code only from a
// finalizer, which only a collection runs, and the heap keeps pages the
// size of its last peak for reuse, returned to the system only slowly. So
// the resident memory of a server whose plugins all sleep stayed near the
// peak of its start (100 Go guests: 570 MiB after a warm restart, 3 GiB
// after a cold one, against 90 and 110 MiB once collected).
//
// A releaser collects and returns that memory (debug.FreeOSMemory) once
// the plugins' life cycle has been quiet for RuntimeConfig.ReleaseAfter:
// no module opened, no code released (a plugin asleep or closed), no
// plugin closed, no wake-up started or running; and, after a release,
// not before releaseSpacing times the CPU it took has passed (releases
// then take at most a twentieth of a core however often plugins fall
// asleep), nor later than releaseCap times ReleaseAfter (wall time, which
// a loaded machine stretches, would put the next one off for long). A release runs off
// every request path and never during a wake-up; it costs one garbage
// collection of the live heap (20-40 ms of CPU for 100 sleeping Go
// guests) and, after it, the page faults of the heap growing again and
// collections at a smaller heap: a wake-up right after a release is
// slower than one into a heap still at its peak. A server whose plugins
// keep waking and falling asleep with no quiet second between them is not
// idle: its heap is left to the Go runtime's own collections and
// background scavenger.

// releaseSpacing is how many times a release's CPU must pass before the
// next one; releaseCap times ReleaseAfter is the most that spacing is.
const (
	releaseSpacing = 20
	releaseCap     = 5
)

// releaser runs debug.FreeOSMemory once the life cycle is quiet.
type releaser struct {
	after time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	timer   *time.Timer
	pending bool      // an event not yet followed by a release
	busy    int       // wake-ups running: no release until they end
	next    time.Time // no release before then (releaseSpacing)
	closed  bool

	releases atomic.Int64
}

// newReleaser returns a releaser that waits for after of quiet; nil (which
// does nothing) when after is not positive.
func newReleaser(after time.Duration, log *slog.Logger) *releaser {
	if after <= 0 {
		return nil
	}
	return &releaser{after: after, log: log}
}

// note records a life-cycle event: a release follows once nothing else
// happened for ReleaseAfter (and the gap since the last one has passed).
func (r *releaser) note() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = true
	r.armLocked()
}

// begin and end bracket a wake-up, during which no release runs.
func (r *releaser) begin() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.busy++
	r.mu.Unlock()
}

func (r *releaser) end() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy--
	r.pending = true
	r.armLocked()
}

func (r *releaser) armLocked() {
	if r.closed {
		return
	}
	wait := releaseWait(r.next, time.Now(), r.after)
	if r.timer == nil {
		r.timer = time.AfterFunc(wait, r.release)
	} else {
		r.timer.Reset(wait)
	}
}

// releaseWait is how long after an event at now the release comes: after,
// or until next if that is later.
func releaseWait(next, now time.Time, after time.Duration) time.Duration {
	return max(after, next.Sub(now))
}

// release collects the heap and returns its free pages to the system.
func (r *releaser) release() {
	r.mu.Lock()
	if r.closed || !r.pending || r.busy > 0 { // a wake-up's end arms it again
		r.mu.Unlock()
		return
	}
	r.pending = false
	r.next = time.Now().Add(time.Hour) // an event during the release waits for its end
	r.mu.Unlock()
	before := readMemMetrics()
	start := time.Now()
	debug.FreeOSMemory()
	took := time.Since(start)
	after := readMemMetrics()
	cpu := time.Duration((after.cpu - before.cpu) * float64(time.Second))
	r.releases.Add(1)
	r.mu.Lock()
	r.next = time.Now().Add(min(releaseSpacing*max(cpu, 0), releaseCap*r.after))
	if r.pending { // an event came during the release
		r.armLocked()
	}
	r.mu.Unlock()
	r.log.Debug("memory returned to the system", "took", took.String(),
		"released_bytes", int64(after.released-before.released), "heap_bytes", int64(after.heap),
		"cpu", cpu.String())
}

// close stops the releaser; a release running finishes.
func (r *releaser) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

// memMetrics are the runtime figures a release logs.
type memMetrics struct {
	released, heap uint64  // bytes returned to the system; bytes of live objects
	cpu            float64 // seconds of CPU spent collecting and returning memory, estimated
}

var memMetricNames = [...]string{
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
}

func readMemMetrics() memMetrics {
	var s [len(memMetricNames)]metrics.Sample
	for i, n := range memMetricNames {
		s[i].Name = n
	}
	metrics.Read(s[:])
	return memMetrics{released: s[0].Value.Uint64(), heap: s[1].Value.Uint64(), cpu: s[2].Value.Float64() + s[3].Value.Float64()}
}

// Releases returns how many times the runtime returned memory to the
// system (RuntimeConfig.ReleaseAfter).
func (r *Runtime) Releases() int64 {
	if r.rel == nil {
		return 0
	}
	return r.rel.releases.Load()
}
