package auth

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// limiter counts failures per key (a client id, an address) in a leaky
// bucket: each failure fills it by one, and it drains at its capacity per
// period. A key whose bucket is full is refused until a failure has
// drained.
type limiter struct {
	perPeriod int
	period    time.Duration

	mu      sync.Mutex
	buckets map[string]bucket
}

type bucket struct {
	level float64 // failures not drained yet
	at    time.Time
}

// maxLimiterKeys bounds the keys kept; past it, the buckets that have
// drained are dropped, and if none has, all are (a flood of keys must not
// exhaust memory; it only resets the counts).
const maxLimiterKeys = 100_000

func newLimiter(perPeriod int, period time.Duration) *limiter {
	return &limiter{perPeriod: perPeriod, period: period, buckets: map[string]bucket{}}
}

func (l *limiter) drained(b bucket, now time.Time) float64 {
	rate := float64(l.perPeriod) / float64(l.period)
	return max(0, b.level-float64(now.Sub(b.at))*rate)
}

// limit is a key and the multiple of perPeriod its bucket holds.
type limit struct {
	key   string
	scale int
}

// check refuses a request if any of its keys' buckets is full.
func (l *limiter) check(now time.Time, limits ...limit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, lim := range limits {
		capacity := float64(l.perPeriod * lim.scale)
		b, ok := l.buckets[lim.key]
		if !ok {
			continue
		}
		level := l.drained(b, now)
		if level > capacity-1 {
			over := level - (capacity - 1)
			wait = max(wait, time.Duration(over*float64(l.period)/float64(l.perPeriod)))
		}
	}
	if wait > 0 {
		// Whole seconds, rounded up as the Retry-After header is: the
		// message and the header give the same delay, never "0s".
		wait = time.Duration(math.Ceil(wait.Seconds())) * time.Second
		return &apierror.Error{Code: apierror.ResourceExhausted, RetryDelay: wait,
			Message: fmt.Sprintf("too many failed token requests: retry in %s", wait)}
	}
	return nil
}

// fail counts a failure against each key.
func (l *limiter) fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) >= maxLimiterKeys {
		for k, b := range l.buckets {
			if l.drained(b, now) == 0 {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= maxLimiterKeys {
			clear(l.buckets)
		}
	}
	for _, k := range keys {
		l.buckets[k] = bucket{level: l.drained(l.buckets[k], now) + 1, at: now}
	}
}
