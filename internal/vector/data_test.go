package vector

import (
	"fmt"
	"math/rand/v2"
)

// clustered returns n vectors of dims dimensions around clusters
// centres (uniform in [-1, 1]), each at a Gaussian offset of spread 0.35
// per component, and queries drawn the same way: the shape of embeddings,
// whose near neighbours are many and close together.
func clustered(n, queries, dims, clusters int, seed uint64) (data, qs [][]float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dims)
		for j := range centres[i] {
			centres[i][j] = r.Float32()*2 - 1
		}
	}
	point := func() []float32 {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*0.35)
		}
		return v
	}
	for range n {
		data = append(data, point())
	}
	for range queries {
		qs = append(qs, point())
	}
	return data, qs
}

func key(i int) string { return fmt.Sprintf("doc%06d", i) }

// build puts data under key(i).
func build(metric Metric, o Options, data [][]float32) *Index {
	x := New(len(data[0]), metric, o)
	for i, v := range data {
		if err := x.Put(key(i), v); err != nil {
			panic(err)
		}
	}
	return x
}

// recall is the share of want's keys that got has.
func recall(got, want []Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[string]bool, len(want))
	for _, h := range want {
		in[h.Key] = true
	}
	n := 0
	for _, h := range got {
		if in[h.Key] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}
