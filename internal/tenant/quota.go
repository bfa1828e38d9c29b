package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// Quota is what a namespace may use; a zero field is no bound.
type Quota struct {
	// StorageBytes bounds the bytes of the namespace's documents, messages
	// and index entries, as collection sizes count them.
	StorageBytes int64 `json:"storage_bytes,omitempty"`
	// RequestsPerSecond bounds the calls its applications make, on each
	// node.
	RequestsPerSecond int64 `json:"requests_per_second,omitempty"`
}

// CheckQuota refuses a quota with a negative bound.
func CheckQuota(q Quota) error {
	if q.StorageBytes < 0 || q.RequestsPerSecond < 0 {
		return apierror.Errorf(apierror.InvalidArgument, "a quota is 0 (no bound) or more")
	}
	return nil
}

// LoadQuota reads namespace ns's quota (the zero Quota if none was set).
func LoadQuota(ctx context.Context, r kv.Reader, ns int64) (Quota, error) {
	var q Quota
	v, err := r.Get(ctx, keyspace.NamespaceQuota(ns))
	if errors.Is(err, kv.ErrNotFound) {
		return q, nil
	}
	if err != nil {
		return q, err
	}
	if err := json.Unmarshal(v, &q); err != nil {
		return q, fmt.Errorf("tenant: corrupt quota of namespace %d: %w", ns, err)
	}
	return q, nil
}

// SaveQuota sets namespace ns's quota; the zero Quota removes it.
func SaveQuota(tx kv.Tx, ns int64, q Quota) error {
	if q == (Quota{}) {
		return tx.Clear(keyspace.NamespaceQuota(ns))
	}
	v, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.NamespaceQuota(ns), v)
}

// StorageRetryDelay is the retry advice sent with a write refused for its
// namespace's storage: space frees when someone deletes data or raises
// the quota, not in a moment.
const StorageRetryDelay = 5 * time.Second

// ErrStorageExceeded is the refusal of a write that would take namespace
// usage past its quota, in the original's words with Folio's figures.
func ErrStorageExceeded(used, quota int64) error {
	return &apierror.Error{Code: apierror.ResourceExhausted, RetryDelay: StorageRetryDelay,
		Message: fmt.Sprintf("data size limit exceeded: the namespace would hold %d bytes, its quota is %d", used, quota)}
}

// Rates bounds the calls of each namespace on this node to its
// RequestsPerSecond with a token bucket holding one second of calls, so
// that a namespace may burst to its rate at once and is then held to it.
// The bound is per node: n nodes serve up to n times the rate between
// them.
type Rates struct {
	mu      sync.Mutex
	buckets map[int64]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	// allowed and refused count the calls of the namespace on this node,
	// for its usage.
	allowed, refused int64
	second           int64 // the Unix second allowed counts in
	lastSecond       int64 // the calls of the second before it
}

// NewRates returns a limiter that holds no namespace yet.
func NewRates() *Rates { return &Rates{buckets: map[int64]*bucket{}} }

// Allow takes one call of namespace ns from its bucket at time now, or
// refuses it with RESOURCE_EXHAUSTED and the delay until the bucket holds
// a call again. rate is the namespace's RequestsPerSecond; 0 allows every
// call (and keeps no bucket).
func (r *Rates) Allow(ns, rate int64, now time.Time) error {
	if rate <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[ns]
	if !ok {
		b = &bucket{tokens: float64(rate), at: now}
		r.buckets[ns] = b
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(float64(rate), b.tokens+elapsed.Seconds()*float64(rate))
		b.at = now
	}
	// A rate lowered since the bucket filled takes effect at once.
	b.tokens = math.Min(b.tokens, float64(rate))
	if b.tokens < 1 {
		b.refused++
		wait := time.Duration((1 - b.tokens) / float64(rate) * float64(time.Second))
		// At least a millisecond: the JSON error counts in milliseconds,
		// and a delay of 0 would read as none.
		wait = max(wait.Round(time.Millisecond), time.Millisecond)
		return &apierror.Error{Code: apierror.ResourceExhausted, RetryDelay: wait,
			Message: fmt.Sprintf("request rate exceeded: the namespace may make %d requests a second; retry in %s", rate, wait)}
	}
	b.tokens--
	if sec := now.Unix(); sec != b.second {
		if sec == b.second+1 {
			b.lastSecond = b.allowed
		} else {
			b.lastSecond = 0
		}
		b.second, b.allowed = sec, 0
	}
	b.allowed++
	return nil
}

// RateUsage is what Usage reports of a namespace's calls on this node.
type RateUsage struct {
	// LastSecond is the calls allowed in the last whole second.
	LastSecond int64
	// Refused is the calls refused since the node started.
	Refused int64
}

// Usage reports namespace ns's calls on this node at time now (zero for
// a namespace without a rate).
func (r *Rates) Usage(ns int64, now time.Time) RateUsage {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[ns]
	if !ok {
		return RateUsage{}
	}
	u := RateUsage{Refused: b.refused}
	switch now.Unix() {
	case b.second + 1:
		u.LastSecond = b.allowed
	case b.second:
		u.LastSecond = b.lastSecond
	}
	return u
}

// Forget drops namespace ns's bucket (its namespace was deleted, or its
// rate removed).
func (r *Rates) Forget(ns int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.buckets, ns)
}

// Quotas caches the namespaces' quotas on a node: every call reads its
// namespace's, and a read of the store for each would cost a round trip
// on PostgreSQL. An entry is kept for QuotaRefresh, so a quota set on
// another node applies here within that time; the node that sets one
// applies it at once (Set).
type Quotas struct {
	load func(ctx context.Context, ns int64) (Quota, error)

	mu      sync.Mutex
	entries map[int64]quotaEntry
	loading map[int64]bool // namespaces being read by Refresh
}

type quotaEntry struct {
	q  Quota
	at time.Time
}

// QuotaRefresh is how long a node keeps a namespace's quota before it
// reads it again.
const QuotaRefresh = time.Second

// NewQuotas returns a cache that reads quotas with load.
func NewQuotas(load func(ctx context.Context, ns int64) (Quota, error)) *Quotas {
	return &Quotas{load: load, entries: map[int64]quotaEntry{}}
}

// Get returns namespace ns's quota as of at most QuotaRefresh ago. If
// the store cannot be read, it returns the error with the quota last
// known (the zero Quota, no bound, if none was).
func (c *Quotas) Get(ctx context.Context, ns int64, now time.Time) (Quota, error) {
	c.mu.Lock()
	e, ok := c.entries[ns]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < QuotaRefresh {
		return e.q, nil
	}
	q, err := c.load(ctx, ns)
	if err != nil {
		// What was known stands (no quota if nothing was), and the store
		// is asked again after QuotaRefresh, not by every call meanwhile:
		// a store that cannot answer (damaged, out of reach) is not asked
		// once per request on top of the request's own reads.
		c.Set(ns, e.q, now)
		return e.q, err
	}
	c.Set(ns, q, now)
	return q, nil
}

// Peek returns namespace ns's quota as last read, without reading the
// store, and whether it is older than QuotaRefresh (or was never read:
// then the zero Quota, no bound).
func (c *Quotas) Peek(ns int64, now time.Time) (q Quota, stale bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[ns]
	return e.q, !ok || now.Sub(e.at) >= QuotaRefresh
}

// Refresh reads namespace ns's quota in the background, once at a time
// for a namespace, if it is stale: the callers that found it so go on
// with the quota they peeked.
func (c *Quotas) Refresh(ns int64, now time.Time) {
	c.mu.Lock()
	if c.loading == nil {
		c.loading = map[int64]bool{}
	}
	if c.loading[ns] {
		c.mu.Unlock()
		return
	}
	c.loading[ns] = true
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Get(ctx, ns, now) // an error keeps the quota last known (Get)
		c.mu.Lock()
		delete(c.loading, ns)
		c.mu.Unlock()
	}()
}

// Set records namespace ns's quota as read (or written) at now.
func (c *Quotas) Set(ns int64, q Quota, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[ns] = quotaEntry{q: q, at: now}
}
