package fields

import (
	"bytes"
	"testing"
)

// A number's $num. term orders as the number does.
func TestNumberTermOrder(t *testing.T) {
	xs := []float64{-1e300, -2.5, -1, -0.0, 0, 1e-9, 1, 2.5, 7000000, 7000060, 1 << 53, 1e300}
	for i := 1; i < len(xs); i++ {
		a, b := numberTerm(xs[i-1]), numberTerm(xs[i])
		if string(a) > string(b) {
			t.Errorf("%g sorts after %g", xs[i-1], xs[i])
		}
		if x, ok := NumberOf(b); !ok || x != xs[i] {
			t.Errorf("%g reads back as %g", xs[i], x)
		}
		if bytes.IndexByte(b, 0xff) >= 0 {
			t.Errorf("%g's term %x holds 0xff, doc values' separator", xs[i], b)
		}
	}
}
