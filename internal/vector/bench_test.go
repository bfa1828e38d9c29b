package vector

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

var (
	benchOnce  sync.Once
	benchIndex *Index
	benchQs    [][]float32
)

// benchSetup builds the benchmarks' index once: 50,000 clustered vectors
// of 128 dimensions, the defaults (M 16, efConstruction 200, efSearch 64).
func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		data, qs := clustered(50_000, 200, 128, 100, 11)
		benchIndex, benchQs = build(Euclidean, Options{Seed: 1}, data), qs
	})
	b.ResetTimer()
}

func BenchmarkSearch(b *testing.B) {
	benchSetup(b)
	b.ReportAllocs()
	for i := range b.N {
		benchIndex.Search(benchQs[i%len(benchQs)], 10, nil)
	}
}

// BenchmarkFilterCrossing runs the same filtered queries by the scan and
// by the graph, for filters keeping from 0.5% to 20% of the keys: where
// the two cross sets scanAlways and scanFraction (filter.go).
func BenchmarkFilterCrossing(b *testing.B) {
	benchSetup(b)
	n := benchIndex.Len()
	for _, pct := range []float64{0.5, 1, 2, 3, 5, 10, 20} {
		r := rand.New(rand.NewPCG(1, uint64(pct*10)))
		f := NewSet()
		for i := range n {
			if r.Float64() < pct/100 {
				f[key(i)] = struct{}{}
			}
		}
		for _, how := range []string{"scan", "graph"} {
			b.Run(fmt.Sprintf("%g%%/%s", pct, how), func(b *testing.B) {
				x := benchIndex
				for i := range b.N {
					q, _ := x.checkVector(benchQs[i%len(benchQs)])
					var res maxHeap
					x.mu.RLock()
					if how == "scan" {
						x.scanAllowed(q, 10, f, &res)
					} else {
						x.searchGraph(q, 10, x.opt.EfSearch, f, &res)
					}
					x.mu.RUnlock()
				}
			})
		}
	}
}

// BenchmarkPut inserts b.N clustered vectors of 128 dimensions into a
// fresh index (the defaults): the build rate is 1/(ns/op).
func BenchmarkPut(b *testing.B) {
	data, _ := clustered(b.N, 0, 128, 100, 12)
	x := New(128, Euclidean, Options{Seed: 1})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		x.Put(key(i), data[i])
	}
}

var (
	largeOnce  sync.Once
	largeIndex *Index
	largeQs    [][]float32
)

// BenchmarkSearchPrefetch compares searches with and without asking for
// the neighbours' vectors ahead (usePrefetch) on an index larger than the
// caches (300,000 vectors of 128 dimensions, 150 MB; built once, about
// two minutes), and on the 50,000 of BenchmarkSearch. Run with -count 3 or
// more: the two alternate within each count.
func BenchmarkSearchPrefetch(b *testing.B) {
	large := func() (*Index, [][]float32) {
		largeOnce.Do(func() {
			data, qs := clustered(300_000, 500, 128, 100, 13)
			largeIndex, largeQs = build(Euclidean, Options{Seed: 1}, data), qs
		})
		return largeIndex, largeQs
	}
	small := func() (*Index, [][]float32) { benchSetup(b); return benchIndex, benchQs }
	for _, size := range []struct {
		name  string
		index func() (*Index, [][]float32)
	}{{"50k", small}, {"300k", large}} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/prefetch=%v", size.name, on), func(b *testing.B) {
				x, qs := size.index()
				was := usePrefetch
				usePrefetch = on
				defer func() { usePrefetch = was }()
				b.ResetTimer()
				for i := range b.N {
					x.SearchEf(qs[i%len(qs)], 10, 256, nil)
				}
			})
		}
	}
}
