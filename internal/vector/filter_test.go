package vector

import "testing"

// TestScanIsCheaper holds the measured crossing (filter.go): below
// sqrt(12·ef·n) allowed keys, or 256, the scan; above, the graph.
func TestScanIsCheaper(t *testing.T) {
	tests := []struct {
		allowed, live, ef int
		scan              bool
	}{
		{0, 0, 64, true},
		{256, 1000, 1, true},           // the absolute bound (the rule gives 109)
		{257, 1000, 1, false},          //
		{5000, 50_000, 64, true},       // 10% of 50,000: still the scan (crossing at 6,197)
		{10_000, 50_000, 64, false},    // 20% of 50,000: the graph
		{8700, 100_000, 64, true},      // crossing at 8,763
		{8800, 100_000, 64, false},     //
		{27_000, 1_000_000, 64, true},  // 2.7% of a million
		{28_000, 1_000_000, 64, false}, // 2.8%
		{10_000, 100_000, 200, true},   // a wider ef makes the graph dearer
	}
	for _, tc := range tests {
		if got := scanIsCheaper(tc.allowed, tc.live, tc.ef); got != tc.scan {
			t.Errorf("scanIsCheaper(%d, %d, %d) = %v, want %v", tc.allowed, tc.live, tc.ef, got, tc.scan)
		}
	}
}
