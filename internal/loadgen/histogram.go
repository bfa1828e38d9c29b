package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records latencies in log-scaled buckets, in the manner of HDR
// histograms: every power of two is split into subBuckets equal steps, so a
// recorded value is kept to within 1/subBuckets (under 1%) of its true value
// whatever its size, in a fixed array. Its memory does not grow with the
// number of values, which lets every client keep its own histogram per
// operation for a run of any length and merge them at the end.
//
// The zero value is ready to use. A Histogram is not safe for concurrent
// use: each client records into its own and Merge combines them.
type Histogram struct {
	counts   [histBuckets]int64
	n        int64
	sum      int64 // nanoseconds; a run would need centuries to overflow it
	min, max int64
}

const (
	subBucketBits = 7
	subBuckets    = 1 << subBucketBits // values below this are counted exactly
	// maxExponent bounds the tracked range at about 2^(maxExponent+8) ns,
	// over an hour; larger values land in the last bucket.
	maxExponent = 34
	histBuckets = (maxExponent + 2) * subBuckets
)

// bucketOf returns the bucket index of a value in nanoseconds.
func bucketOf(v int64) int {
	if v < subBuckets {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	// Shift v right until it fits in [subBuckets, 2*subBuckets): exp is
	// the shift, and v>>exp the step within that power of two.
	exp := bits.Len64(uint64(v)) - subBucketBits - 1
	if exp > maxExponent {
		return histBuckets - 1
	}
	return (exp+1)*subBuckets + int(v>>exp) - subBuckets
}

// bucketRange returns the smallest and largest values of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < subBuckets {
		return int64(i), int64(i)
	}
	exp := i/subBuckets - 1
	step := int64(i%subBuckets + subBuckets)
	return step << exp, (step+1)<<exp - 1
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of recorded values.
func (h *Histogram) Count() int64 { return h.n }

// Min and Max return the exact extremes (0 when empty).
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest recorded value (0 when empty).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the exact mean (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Quantile returns the value below or at which a fraction q (0 to 1) of the
// recorded values lie, to within the bucket precision: the middle of the
// bucket that holds that rank, clamped to the exact minimum and maximum.
// It returns 0 when the histogram is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	// The rank of the value asked for, counting from 1, as in "the p99
	// of 100 values is the 99th smallest".
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = max(1, min(rank, h.n))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			return time.Duration(max(h.min, min(v, h.max)))
		}
	}
	return time.Duration(h.max)
}
