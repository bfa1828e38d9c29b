package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMetricDistances(t *testing.T) {
	tests := []struct {
		name   string
		metric Metric
		a, b   []float32
		want   float32 // as reported in a Hit
	}{
		{"cosine same direction", Cosine, []float32{1, 2, 3}, []float32{2, 4, 6}, 0},
		{"cosine orthogonal", Cosine, []float32{1, 0}, []float32{0, 5}, 1},
		{"cosine opposite", Cosine, []float32{1, 1}, []float32{-3, -3}, 2},
		{"cosine 60 degrees", Cosine, []float32{1, 0}, []float32{0.5, float32(math.Sqrt(3) / 2)}, 0.5},
		{"euclidean 3-4-5", Euclidean, []float32{0, 0}, []float32{3, 4}, 5},
		{"euclidean same", Euclidean, []float32{1, -2, 3}, []float32{1, -2, 3}, 0},
		{"euclidean odd length", Euclidean, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}, []float32{0, 0, 0, 0, 0, 0, 0, 0, 0}, 3},
		{"dot negated", Dot, []float32{1, 2, 3}, []float32{4, 5, 6}, -32},
		{"dot orthogonal", Dot, []float32{1, 0}, []float32{0, 1}, 0},
		{"dot larger is nearer", Dot, []float32{1, 1}, []float32{10, 10}, -20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := append([]float32(nil), tc.a...), append([]float32(nil), tc.b...)
			if tc.metric == Cosine {
				normalise(a)
				normalise(b)
			}
			got := tc.metric.reported(tc.metric.distance(a, b))
			if math.Abs(float64(got-tc.want)) > 1e-5 {
				t.Errorf("%v distance = %v, want %v", tc.metric, got, tc.want)
			}
		})
	}
}

func TestNormaliseRefusesZero(t *testing.T) {
	if normalise([]float32{0, 0, 0}) {
		t.Error("a zero vector was normalised")
	}
	v := []float32{3, 4}
	if !normalise(v) || math.Abs(float64(v[0]-0.6)) > 1e-6 || math.Abs(float64(v[1]-0.8)) > 1e-6 {
		t.Errorf("normalise(3,4) = %v", v)
	}
	// Tiny components, whose squares are zero in float32: a direction all
	// the same (the schema takes such a vector under cosine).
	for _, x := range []float32{1e-30, 1e-40} { // 1e-40 is subnormal
		tiny := []float32{x, 0, x}
		if !normalise(tiny) || math.Abs(float64(tiny[0])-math.Sqrt2/2) > 1e-6 {
			t.Errorf("normalise(%g, 0, %g) = %v", x, x, tiny)
		}
	}
}

// TestKernelsAgree runs the assembly kernels against the portable ones on
// every length from 1 to 300 (tails of every size around 8 and 32), and
// on slices that do not start on an aligned address.
func TestKernelsAgree(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 and FMA on this CPU: the portable kernels are the only ones")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 300; n++ {
		for off := 0; off < 3; off++ {
			a, b := make([]float32, n+off), make([]float32, n+off)
			for i := range a {
				a[i], b[i] = r.Float32()*2-1, r.Float32()*2-1
			}
			a, b = a[off:], b[off:]
			checkClose(t, "dot", n, dotAVX2(&a[0], &b[0], n), dotGo(a, b))
			checkClose(t, "l2sq", n, l2sqAVX2(&a[0], &b[0], n), l2sqGo(a, b))
		}
	}
}

func checkClose(t *testing.T, what string, n int, asm, pure float32) {
	t.Helper()
	// Both sum n products in a different order (and the assembly fuses
	// multiply and add): a relative tolerance on the magnitude of the terms.
	if diff := math.Abs(float64(asm - pure)); diff > 1e-5*float64(n) {
		t.Errorf("%s over %d: assembly %v, Go %v", what, n, asm, pure)
	}
}

func BenchmarkDistance128(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, 128), make([]float32, 128)
	for i := range x {
		x[i], y[i] = r.Float32(), r.Float32()
	}
	var sink float32
	b.Run("l2sq/go", func(b *testing.B) {
		for range b.N {
			sink += l2sqGo(x, y)
		}
	})
	b.Run("dot/go", func(b *testing.B) {
		for range b.N {
			sink += dotGo(x, y)
		}
	})
	if useAVX2 {
		b.Run("l2sq/avx2", func(b *testing.B) {
			for range b.N {
				sink += l2sqAVX2(&x[0], &y[0], len(x))
			}
		})
		b.Run("dot/avx2", func(b *testing.B) {
			for range b.N {
				sink += dotAVX2(&x[0], &y[0], len(x))
			}
		})
	}
	_ = sink
}
