package kv

import (
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// TxCounters count how a store's transactions ended, for metrics: NewTx
// counts commits, conflicts and rollbacks, RunWith its retries and the
// transactions it gave up on. A store hands its own to NewTx and reports
// them through Counted. Safe for concurrent use.
type TxCounters struct {
	commits, conflicts, commitErrors, rollbacks, retries, aborts atomic.Uint64
	// commitTime is the backend's part of each commit that wrote: the
	// conflict check, the write and the sync (or PostgreSQL's round trip).
	commitTime *Histogram
}

// NewTxCounters returns counters at zero.
func NewTxCounters() *TxCounters {
	return &TxCounters{commitTime: NewHistogram(CommitBuckets)}
}

// TxStats is a snapshot of TxCounters.
type TxStats struct {
	// Commits is the commits that wrote something and were applied;
	// commits of transactions that only read are not counted.
	Commits uint64
	// Conflicts is the commits rejected with ErrConflict.
	Conflicts uint64
	// CommitErrors is the commits that failed otherwise: too old, the
	// store closed or failing, the caller gone before the commit.
	CommitErrors uint64
	// Rollbacks is the transactions ended without a commit: rolled back
	// by a client, or by a request that failed.
	Rollbacks uint64
	// Retries is the attempts RunWith made again after a retryable error;
	// Aborts the transactions it gave up on after its last attempt.
	Retries, Aborts uint64
	// CommitSeconds is how long the backend took over each commit that
	// wrote, whatever its outcome.
	CommitSeconds HistogramSnapshot
}

// Counted is a store that counts its transactions (both backends do).
type Counted interface {
	TxCounters() *TxCounters
}

// CommitBuckets are the bounds, in seconds, of commit and sync times: from
// a group commit on a fast disk to a stalled one.
var CommitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// Stats returns a snapshot of the counters.
func (c *TxCounters) Stats() TxStats {
	return TxStats{
		Commits:       c.commits.Load(),
		Conflicts:     c.conflicts.Load(),
		CommitErrors:  c.commitErrors.Load(),
		Rollbacks:     c.rollbacks.Load(),
		Retries:       c.retries.Load(),
		Aborts:        c.aborts.Load(),
		CommitSeconds: c.commitTime.Snapshot(),
	}
}

// committed counts the outcome of a commit that wrote.
func (c *TxCounters) committed(err error, took time.Duration) {
	if c == nil {
		return
	}
	c.commitTime.Observe(took.Seconds())
	switch {
	case err == nil:
		c.commits.Add(1)
	case errors.Is(err, ErrConflict):
		c.conflicts.Add(1)
	default:
		c.commitErrors.Add(1)
	}
}

// retried counts an attempt RunWith makes again; gaveUp one it gave up on.
func (c *TxCounters) retried() {
	if c != nil {
		c.retries.Add(1)
	}
}

func (c *TxCounters) gaveUp() {
	if c != nil {
		c.aborts.Add(1)
	}
}

func (c *TxCounters) rolledBack() {
	if c != nil {
		c.rollbacks.Add(1)
	}
}

// Histogram counts observations into fixed buckets: the plain form of the
// distributions a store reports (commit group sizes, sync times), which
// internal/metrics turns into Prometheus histograms. Safe for concurrent
// use.
type Histogram struct {
	bounds []float64       // upper bounds, increasing
	counts []atomic.Uint64 // one per bound, then one past the last
	sum    atomic.Uint64   // float64 bits
}

// NewHistogram returns a histogram with buckets ending at bounds
// (increasing), and one past the last.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// HistogramSnapshot is a histogram's counts at one moment. Counts[i] is
// the observations in bucket i alone (not cumulative): those at most
// Bounds[i] and above the bound before; the last is those above every
// bound.
type HistogramSnapshot struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
}

// Snapshot returns the counts now. Observations running meanwhile may be
// in the counts and not yet in the sum, or the reverse.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Bounds: h.bounds, Counts: make([]uint64, len(h.counts))}
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
		s.Count += s.Counts[i]
	}
	s.Sum = math.Float64frombits(h.sum.Load())
	return s
}
