package loadgen

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestBucketsHoldTheirValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := []int64{0, 1, 127, 128, 129, 255, 256, 257, 1000, 1 << 20, 1<<40 - 1}
	for range 10_000 {
		values = append(values, r.Int64N(1<<41))
	}
	for _, v := range values {
		i := bucketOf(v)
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Fatalf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if width := float64(hi - lo + 1); v >= subBuckets && width/float64(v) > 1.0/subBuckets+1e-9 {
			t.Fatalf("value %d in bucket [%d, %d]: wider than 1/%d of the value", v, lo, hi, subBuckets)
		}
	}
	if got := bucketOf(math.MaxInt64); got != histBuckets-1 {
		t.Errorf("a huge value lands in bucket %d, want the last, %d", got, histBuckets-1)
	}
}

func TestQuantiles(t *testing.T) {
	var h Histogram
	// 1 µs to 10,000 µs, each once: the q-quantile is q·10,000 µs.
	for i := 1; i <= 10_000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Microsecond},
		{0.5, 5000 * time.Microsecond},
		{0.95, 9500 * time.Microsecond},
		{0.99, 9900 * time.Microsecond},
		{0.999, 9990 * time.Microsecond},
		{1, 10_000 * time.Microsecond},
	}
	for _, tt := range tests {
		got := h.Quantile(tt.q)
		if rel := math.Abs(float64(got-tt.want)) / float64(tt.want); rel > 1.0/subBuckets {
			t.Errorf("Quantile(%v) = %v, want %v within %.1f%%", tt.q, got, tt.want, 100.0/subBuckets)
		}
	}
	if h.Count() != 10_000 || h.Min() != time.Microsecond || h.Max() != 10*time.Millisecond {
		t.Errorf("count %d, min %v, max %v", h.Count(), h.Min(), h.Max())
	}
	if want := 5000500 * time.Nanosecond; h.Mean() != want {
		t.Errorf("mean %v, want %v", h.Mean(), want)
	}
}

func TestQuantileOfOneValueIsThatValue(t *testing.T) {
	var h Histogram
	h.Record(1234567 * time.Nanosecond)
	for _, q := range []float64{0, 0.5, 0.99, 1} {
		if got := h.Quantile(q); got != 1234567*time.Nanosecond {
			t.Errorf("Quantile(%v) = %v: one value is every quantile, exactly (clamped to min and max)", q, got)
		}
	}
}

func TestEmptyHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 || h.Count() != 0 || h.Max() != 0 {
		t.Error("an empty histogram must report zeros")
	}
	var other Histogram
	other.Record(time.Second)
	h.Merge(&Histogram{}) // merging an empty one changes nothing
	if h.Count() != 0 {
		t.Error("merging an empty histogram added values")
	}
	h.Merge(&other)
	if h.Min() != time.Second || h.Max() != time.Second {
		t.Errorf("after merging into an empty histogram: min %v max %v", h.Min(), h.Max())
	}
}

// Merging per-client histograms must give what one histogram of every value
// gives.
func TestMergeEqualsRecordingAll(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var all Histogram
	parts := make([]Histogram, 4)
	for i := range 40_000 {
		d := time.Duration(r.ExpFloat64() * float64(time.Millisecond))
		all.Record(d)
		parts[i%len(parts)].Record(d)
	}
	var merged Histogram
	for i := range parts {
		merged.Merge(&parts[i])
	}
	if merged != all {
		t.Fatalf("merged histogram differs from the histogram of all values")
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		if merged.Quantile(q) != all.Quantile(q) {
			t.Errorf("Quantile(%v): merged %v, all %v", q, merged.Quantile(q), all.Quantile(q))
		}
	}
}
