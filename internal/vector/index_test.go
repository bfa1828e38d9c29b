package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestPutAndSearchRefuseBadInput(t *testing.T) {
	x := New(3, Cosine, Options{})
	tests := []struct {
		name string
		key  string
		v    []float32
		want error
	}{
		{"too few dimensions", "a", []float32{1, 2}, ErrDimensions},
		{"too many dimensions", "a", []float32{1, 2, 3, 4}, ErrDimensions},
		{"NaN", "a", []float32{1, float32(math.NaN()), 3}, ErrNotFinite},
		{"infinity", "a", []float32{1, float32(math.Inf(-1)), 3}, ErrNotFinite},
		{"zero under cosine", "a", []float32{0, 0, 0}, ErrZero},
		{"empty key", "", []float32{1, 2, 3}, ErrKey},
		{"key too long", string(make([]byte, MaxKeyLen+1)), []float32{1, 2, 3}, ErrKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := x.Put(tc.key, tc.v); !errors.Is(err, tc.want) {
				t.Errorf("Put = %v, want %v", err, tc.want)
			}
			if tc.key != "" && len(tc.key) <= MaxKeyLen {
				if _, err := x.Search(tc.v, 1, nil); !errors.Is(err, tc.want) {
					t.Errorf("Search = %v, want %v", err, tc.want)
				}
			}
		})
	}
	if x.Len() != 0 {
		t.Errorf("Len = %d after refused puts", x.Len())
	}
	if err := x.Put("a", []float32{0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	if hits, err := x.Search([]float32{0, 0, 2}, 0, nil); err != nil || len(hits) != 0 {
		t.Errorf("k = 0: %v, %v", hits, err)
	}
}

func TestNewPanicsOnBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"dims 0", func() { New(0, Cosine, Options{}) }},
		{"dims over the limit", func() { New(MaxDims+1, Cosine, Options{}) }},
		{"unknown metric", func() { New(3, Metric(9), Options{}) }},
		{"M 1", func() { New(3, Cosine, Options{M: 1}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

// TestRecall measures recall@10 against exact search on 20,000 clustered
// vectors of 32 dimensions: unfiltered, and with filters keeping 1% and
// 20% of the keys, through Search (which scans the 1% filter) and through
// the graph alone (which must hold recall at 1% too).
func TestRecall(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 5_000
	}
	data, qs := clustered(n, 200, 32, 40, 1)
	for _, metric := range []Metric{Euclidean, Cosine, Dot} {
		t.Run(metric.String(), func(t *testing.T) {
			x := build(metric, Options{Seed: 1}, data)
			r := rand.New(rand.NewPCG(3, 4))
			filters := map[string]Set{"none": nil, "1%": NewSet(), "20%": NewSet()}
			for i := range data {
				p := r.Float64()
				if p < 0.01 {
					filters["1%"][key(i)] = struct{}{}
				}
				if p < 0.20 {
					filters["20%"][key(i)] = struct{}{}
				}
			}
			for name, f := range filters {
				var filter Filter
				if f != nil {
					filter = f
				}
				var viaSearch, viaGraph float64
				for _, q := range qs {
					want, _ := x.SearchExact(q, 10, filter)
					got, err := x.Search(q, 10, filter)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("filter %s: %d hits, want %d", name, len(got), len(want))
					}
					viaSearch += recall(got, want)
					viaGraph += recall(x.graphOnly(q, 10, filter), want)
				}
				viaSearch /= float64(len(qs))
				viaGraph /= float64(len(qs))
				t.Logf("%v filter %s: recall@10 %.3f (Search), %.3f (graph)", metric, name, viaSearch, viaGraph)
				if viaSearch < 0.95 || viaGraph < 0.95 {
					t.Errorf("%v filter %s: recall@10 %.3f (Search), %.3f (graph), want >= 0.95", metric, name, viaSearch, viaGraph)
				}
			}
		})
	}
}

// graphOnly searches the graph whatever the filter's size.
func (x *Index) graphOnly(q []float32, k int, f Filter) []Hit {
	c, err := x.checkVector(q)
	if err != nil {
		panic(err)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	var res maxHeap
	x.searchGraph(c, k, max(x.opt.EfSearch, k), f, &res)
	var hits []Hit
	for _, r := range res.sorted(nil) {
		hits = append(hits, Hit{x.keys[r.id], x.metric.reported(r.d)})
	}
	return hits
}

// TestFilterReturnsKWhenKExist: a filter applies before the neighbours
// are chosen, so a query far from every allowed key still gets k of
// them, from the scan and from the graph.
func TestFilterReturnsKWhenKExist(t *testing.T) {
	data, _ := clustered(3000, 0, 16, 10, 2)
	x := build(Euclidean, Options{Seed: 2}, data)
	allowed := NewSet(key(5), key(500), key(1500), key(2999), "no such key")
	q := data[1000]
	for name, hits := range map[string][]Hit{
		"search": must(x.Search(q, 4, allowed)),
		"graph":  x.graphOnly(q, 4, allowed),
	} {
		if len(hits) != 4 {
			t.Errorf("%s: %d hits %v, want the 4 allowed keys", name, len(hits), hits)
		}
		for _, h := range hits {
			if !allowed.Allows(h.Key) {
				t.Errorf("%s: %s returned, not allowed", name, h.Key)
			}
		}
	}
	if hits := must(x.Search(q, 10, allowed)); len(hits) != 4 {
		t.Errorf("k = 10 with 4 allowed: %d hits", len(hits))
	}
}

func must(h []Hit, err error) []Hit {
	if err != nil {
		panic(err)
	}
	return h
}

// TestReplaceAndDelete: a replaced vector's old position and a deleted
// key are never returned, before and after the tombstones are compacted,
// by the graph, the scan and the exact search.
func TestReplaceAndDelete(t *testing.T) {
	data, _ := clustered(2000, 0, 8, 5, 3)
	x := build(Euclidean, Options{Seed: 3}, data)
	far := []float32{50, 50, 50, 50, 50, 50, 50, 50}
	old := data[7]
	if err := x.Put(key(7), far); err != nil {
		t.Fatal(err)
	}
	x.Delete(key(8))
	x.Delete("never put")
	if x.Len() != 1999 {
		t.Fatalf("Len = %d, want 1999", x.Len())
	}
	check := func(stage string) {
		t.Helper()
		all := NewSet()
		for i := range data {
			all[key(i)] = struct{}{}
		}
		for name, hits := range map[string][]Hit{
			"graph":        must(x.Search(old, 10, nil)),
			"exact":        must(x.SearchExact(old, 10, nil)),
			"graph filter": x.graphOnly(old, 10, all),
			"scan filter":  must(x.Search(old, 10, NewSet(key(7), key(8), key(9)))),
		} {
			for _, h := range hits {
				if h.Key == key(8) {
					t.Errorf("%s %s: deleted key returned", stage, name)
				}
				if h.Key == key(7) && h.Distance < 10 {
					t.Errorf("%s %s: replaced key at its old position (distance %v)", stage, name, h.Distance)
				}
			}
		}
		if hits := must(x.Search(far, 1, nil)); len(hits) != 1 || hits[0].Key != key(7) || hits[0].Distance != 0 {
			t.Errorf("%s: the replaced key at its new position: %v", stage, hits)
		}
	}
	check("with tombstones")
	if st := x.Stats(); st.Tombstones != 2 {
		t.Fatalf("tombstones = %d, want 2", st.Tombstones)
	}
	// Enough deletes to compact.
	for i := 100; i < 400; i++ {
		x.Delete(key(i))
	}
	if st := x.Stats(); st.Free == 0 {
		t.Fatalf("no compaction after 302 deletes of 2000: %+v", st)
	}
	check("after compaction")
	if err := x.Put(key(8), old); err != nil {
		t.Fatal(err)
	}
	if hits := must(x.Search(old, 1, nil)); hits[0].Key != key(8) {
		t.Errorf("a key put again after its delete: %v", hits)
	}
}

// TestChurnIsBounded replaces every vector and deletes and puts a third
// of the keys, twenty times over: the slots stay within the compaction
// share of the live keys, and the recall holds.
func TestChurnIsBounded(t *testing.T) {
	const n = 2000
	data, qs := clustered(n*2, 50, 16, 20, 4)
	x := New(16, Euclidean, Options{Seed: 4})
	r := rand.New(rand.NewPCG(5, 6))
	version := make([]int, n) // which of the two vectors key i holds
	for i := range n {
		x.Put(key(i), data[i])
	}
	for round := range 20 {
		for i := range n {
			switch {
			case r.IntN(3) == 0:
				x.Delete(key(i))
				version[i] = -1
			default:
				version[i] = (version[i] + 1 + round) % 2
				x.Put(key(i), data[i+version[i]*n])
			}
		}
		for i := range n {
			if version[i] == -1 {
				version[i] = 0
				x.Put(key(i), data[i])
			}
		}
		st := x.Stats()
		if slots := st.Live + st.Tombstones + st.Free; slots > n*12/10+1 {
			t.Fatalf("round %d: %d slots for %d keys: %+v", round, slots, n, st)
		}
	}
	var sum float64
	for _, q := range qs {
		sum += recall(must(x.Search(q, 10, nil)), must(x.SearchExact(q, 10, nil)))
	}
	if sum /= float64(len(qs)); sum < 0.95 {
		t.Errorf("recall@10 after churn %.3f, want >= 0.95", sum)
	}
}

func TestEmptyIndex(t *testing.T) {
	x := New(2, Euclidean, Options{})
	if hits := must(x.Search([]float32{1, 2}, 5, nil)); len(hits) != 0 {
		t.Errorf("empty index: %v", hits)
	}
	x.Put("a", []float32{1, 2})
	x.Delete("a")
	if hits := must(x.Search([]float32{1, 2}, 5, nil)); len(hits) != 0 {
		t.Errorf("after the only key's delete: %v", hits)
	}
	x.Put("b", []float32{3, 4})
	if hits := must(x.Search([]float32{1, 2}, 5, nil)); len(hits) != 1 || hits[0].Key != "b" {
		t.Errorf("after a put into the emptied index: %v", hits)
	}
}

// TestPutSameVectorKeepsTheNode: a put of the vector a key holds already
// (a write of a document's other fields, a replay of the log) leaves the
// graph as it is: no tombstone, no new slot.
func TestPutSameVectorKeepsTheNode(t *testing.T) {
	for _, m := range []Metric{Cosine, Euclidean, Dot} {
		x := New(3, m, Options{Seed: 1})
		for i := range 50 {
			if err := x.Put(fmt.Sprint(i), []float32{float32(i) + 1, 2, 3}); err != nil {
				t.Fatal(err)
			}
		}
		before := x.Stats()
		for i := range 50 {
			if err := x.Put(fmt.Sprint(i), []float32{float32(i) + 1, 2, 3}); err != nil {
				t.Fatal(err)
			}
		}
		if after := x.Stats(); after != before {
			t.Errorf("%v: the same vectors put again changed the index: %+v, was %+v", m, after, before)
		}
		if err := x.Put("7", []float32{9, 9, 9}); err != nil {
			t.Fatal(err)
		}
		if st := x.Stats(); st.Tombstones != 1 {
			t.Errorf("%v: a changed vector left %d tombstones, want 1", m, st.Tombstones)
		}
	}
}

// TestSearchEf: a query's breadth trades its time for recall, so on a
// sparse graph (M 4, efConstruction 16), where the default breadth
// misses, each larger ef must not lower the mean recall and the largest
// must raise it well; ef 0 is the index's own, and one below k still
// returns k hits.
func TestSearchEf(t *testing.T) {
	data, qs := clustered(5_000, 100, 32, 20, 5)
	x := build(Euclidean, Options{M: 4, EfConstruction: 16, EfSearch: 10, Seed: 1}, data)
	var wants [][]Hit
	for _, q := range qs {
		wants = append(wants, must(x.SearchExact(q, 10, nil)))
	}
	meanRecall := func(ef int) float64 {
		var sum float64
		for i, q := range qs {
			got, err := x.SearchEf(q, 10, ef, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 10 {
				t.Fatalf("ef %d: %d hits", ef, len(got))
			}
			sum += recall(got, wants[i])
		}
		return sum / float64(len(qs))
	}
	prev := meanRecall(1)
	first := prev
	for _, ef := range []int{10, 20, 40, 80, 160, 320} {
		r := meanRecall(ef)
		t.Logf("ef %d: recall@10 %.3f", ef, r)
		if r < prev {
			t.Errorf("ef %d: recall@10 %.3f, below the smaller ef's %.3f", ef, r, prev)
		}
		prev = r
	}
	if prev < first+0.2 {
		t.Errorf("recall@10 %.3f at ef 320 against %.3f at ef 1: the breadth does nothing", prev, first)
	}
	for _, q := range qs[:10] {
		if a, b := must(x.SearchEf(q, 10, 0, nil)), must(x.Search(q, 10, nil)); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("ef 0 gave %v, Search %v", a, b)
		}
	}
	for _, ef := range []int{-1, 1<<16 + 1} {
		if _, err := x.SearchEf(qs[0], 10, ef, nil); !errors.Is(err, ErrEfSearch) {
			t.Errorf("ef %d: %v, want ErrEfSearch", ef, err)
		}
	}
}

// Prefetching changes when vectors are loaded, never what a search finds:
// the same graph built and searched with it on and off gives the same hits.
func TestPrefetchChangesNoResult(t *testing.T) {
	data, qs := clustered(3000, 50, 32, 10, 21)
	search := func(on bool) [][]Hit {
		was := usePrefetch
		usePrefetch = on
		defer func() { usePrefetch = was }()
		x := build(Euclidean, Options{Seed: 3}, data)
		var all [][]Hit
		for _, q := range qs {
			hits, err := x.SearchEf(q, 10, 100, nil)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, hits)
		}
		return all
	}
	off, on := search(false), search(true)
	if !reflect.DeepEqual(off, on) {
		t.Fatal("searches with and without prefetching differ")
	}
}
