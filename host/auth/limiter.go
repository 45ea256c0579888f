package auth

import (
	"sync"
	"time"

	"github.com/corral-mcp/corral/abi"
	"golang.org/x/time/rate"
)

// maxLimiters bounds the principals a Limiter tracks; beyond it the ones
// idle longest are forgotten (a forgotten principal starts with a full
// bucket, which only ever errs towards serving).
const maxLimiters = 10000

// Limiter is a token bucket per principal id.
type Limiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu sync.Mutex
	m  map[string]*limiterEntry
}

type limiterEntry struct {
	l    *rate.Limiter
	used time.Time
}

// NewLimiter allows each principal perSecond requests a second on average
// and burst at once. perSecond <= 0 returns nil, which allows everything.
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	return &Limiter{rate: rate.Limit(perSecond), burst: max(burst, 1), now: time.Now, m: map[string]*limiterEntry{}}
}

// Allow reports whether p may make one more request now. A nil Limiter
// allows everything.
func (l *Limiter) Allow(p abi.Principal) bool {
	if l == nil {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[p.ID]
	if !ok {
		if len(l.m) >= maxLimiters {
			l.evictLocked(now)
		}
		e = &limiterEntry{l: rate.NewLimiter(l.rate, l.burst)}
		l.m[p.ID] = e
	}
	e.used = now
	return e.l.AllowN(now, 1)
}

// evictLocked forgets principals whose buckets have refilled, or, if none
// has, the least recently used.
func (l *Limiter) evictLocked(now time.Time) {
	full := time.Duration(float64(l.burst) / float64(l.rate) * float64(time.Second))
	var oldest string
	var oldestAt time.Time
	for id, e := range l.m {
		if now.Sub(e.used) >= full {
			delete(l.m, id)
			continue
		}
		if oldest == "" || e.used.Before(oldestAt) {
			oldest, oldestAt = id, e.used
		}
	}
	if len(l.m) >= maxLimiters {
		delete(l.m, oldest)
	}
}
