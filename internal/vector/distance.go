package vector

import (
	"fmt"
	"math"
)

// Metric is how two vectors' distance is measured. Every metric's
// distance is lower for nearer vectors, so that one search serves all.
type Metric uint8

const (
	// Cosine is the original's metric: the distance is 1 - cos(a, b), in
	// [0, 2]. Vectors are normalised once, when put, so that it is
	// computed as 1 - a·b; a vector of length zero has no direction and
	// is refused.
	Cosine Metric = iota
	// Euclidean is the plain L2 distance, sqrt(Σ(a-b)²). The search
	// compares squared distances (the same order) and takes the root of
	// the k it returns only.
	Euclidean
	// Dot is the negated dot product, -a·b: the largest product is the
	// nearest. Vectors are not normalised.
	Dot
)

func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Euclidean:
		return "euclidean"
	case Dot:
		return "dot"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

func (m Metric) valid() bool { return m <= Dot }

// distance is the metric's order-preserving distance between a and b of
// equal length, as the graph compares them: 1-a·b for Cosine (both
// normalised), the squared L2 for Euclidean, -a·b for Dot.
func (m Metric) distance(a, b []float32) float32 {
	switch m {
	case Euclidean:
		return l2sq(a, b)
	case Dot:
		return -dot(a, b)
	default:
		return 1 - dot(a, b)
	}
}

// reported turns an order-preserving distance into the one the metric
// names (Distance in a Hit).
func (m Metric) reported(d float32) float32 {
	switch m {
	case Euclidean:
		return float32(math.Sqrt(float64(d)))
	case Cosine:
		// Rounding can take 1-a·b of a vector and itself just below 0.
		return max(0, min(2, d))
	}
	return d
}

// dot is a·b over len(a) (b at least as long), by the fastest kernel
// this CPU has (distance_amd64.go).
func dot(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		return dotAVX2(&a[0], &b[:len(a)][0], len(a))
	}
	return dotGo(a, b)
}

// l2sq is Σ(a-b)² over len(a).
func l2sq(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		return l2sqAVX2(&a[0], &b[:len(a)][0], len(a))
	}
	return l2sqGo(a, b)
}

// dotGo is the portable kernel: four accumulators, so that the adds of
// one step do not wait on the last (and bounds checks hoisted by the
// three-index slices).
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func l2sqGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// normalise scales v in place to length 1; it reports false for a vector
// of length zero.
func normalise(v []float32) bool {
	// The length in float64: squares of small components (1e-30) are
	// zero in float32, and a vector the schema took as not zero must not
	// be refused here.
	var sq float64
	for _, x := range v {
		sq += float64(x) * float64(x)
	}
	n := math.Sqrt(sq)
	if n == 0 {
		return false
	}
	// Divided in float64 too: 1/n of a subnormal length is past
	// float32's range.
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return true
}
