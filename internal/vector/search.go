package vector

import "fmt"

// Hit is a key found by a search and its distance to the query, as the
// metric names it (Metric).
type Hit struct {
	Key      string
	Distance float32
}

// Search returns the k keys whose vectors are nearest q, nearest first,
// among those f allows (all when f is nil): k of them whenever k
// allowed keys have a vector. It is approximate: the graph's recall
// depends on EfSearch (a small filter is scanned exactly). A q of the
// wrong dimensions, not finite, or zero under Cosine is an error.
func (x *Index) Search(q []float32, k int, f Filter) ([]Hit, error) {
	return x.search(q, k, 0, f, false)
}

// SearchEf is Search with a breadth ef in place of the index's
// EfSearch (0: the index's): the one parameter that trades a query's
// time for its recall, so a caller can choose it per query without
// rebuilding. An ef out of [0, 65536] is an error.
func (x *Index) SearchEf(q []float32, k, ef int, f Filter) ([]Hit, error) {
	if ef < 0 || ef > maxEf {
		return nil, fmt.Errorf("%w: efSearch %d out of [0, %d]", ErrEfSearch, ef, maxEf)
	}
	return x.search(q, k, ef, f, false)
}

// SearchExact is Search by comparing q with every allowed vector: the
// exact answer, for tests and for measuring the graph's recall.
func (x *Index) SearchExact(q []float32, k int, f Filter) ([]Hit, error) {
	return x.search(q, k, 0, f, true)
}

func (x *Index) search(q []float32, k, ef int, f Filter, exact bool) ([]Hit, error) {
	c, err := x.checkVector(q)
	if err != nil || k <= 0 {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.ids) == 0 {
		return nil, nil
	}
	if ef == 0 {
		ef = x.opt.EfSearch
	}
	ef = max(ef, k)
	var res maxHeap
	switch {
	case exact && f == nil:
		x.scanAll(c, k, &res)
	case exact || f != nil && scanIsCheaper(f.Len(), len(x.ids), ef):
		x.scanAllowed(c, k, f, &res)
	default:
		x.searchGraph(c, k, ef, f, &res)
	}
	sorted := res.sorted(nil)
	hits := make([]Hit, len(sorted))
	for i, r := range sorted {
		hits[i] = Hit{Key: x.keys[r.id], Distance: x.metric.reported(r.d)}
	}
	return hits, nil
}

// searchGraph is the paper's Algorithm 5: down the upper layers greedily,
// then layer 0 with breadth ef (at least k), taking only live nodes that f
// allows as results.
func (x *Index) searchGraph(q []float32, k, ef int, f Filter, res *maxHeap) {
	var accept func(uint32) bool
	switch {
	case f != nil:
		accept = func(id uint32) bool { return x.state[id] == live && f.Allows(x.keys[id]) }
	case x.tombstones > 0:
		accept = func(id uint32) bool { return x.state[id] == live }
	}
	ep := x.greedy(q, 0, x.metric)
	vis := getVisited(len(x.keys))
	defer vis.release()
	var cands minHeap
	x.searchLayer(q, x.metric, []cand{ep}, ef, 0, vis, accept, &cands, res)
	for len(*res) > k {
		res.pop()
	}
}

// scanAll compares q with every live vector.
func (x *Index) scanAll(q []float32, k int, res *maxHeap) {
	for slot, st := range x.state {
		if st == live {
			keepBest(res, k, cand{x.metric.distance(q, x.vec(uint32(slot))), uint32(slot)})
		}
	}
}

// scanAllowed compares q with the vector of every key f allows (every
// live one when f is nil).
func (x *Index) scanAllowed(q []float32, k int, f Filter, res *maxHeap) {
	if f == nil {
		x.scanAll(q, k, res)
		return
	}
	for key := range f.Keys() {
		if slot, ok := x.ids[key]; ok {
			keepBest(res, k, cand{x.metric.distance(q, x.vec(slot)), slot})
		}
	}
}

// keepBest adds c to the k best in res.
func keepBest(res *maxHeap, k int, c cand) {
	if len(*res) < k {
		res.push(c)
	} else if c.d < (*res)[0].d {
		res.pop()
		res.push(c)
	}
}
