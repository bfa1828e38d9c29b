package vector

import "slices"

// insert links the node in slot into the graph: the paper's Algorithm 1.
// The caller holds the write lock.
func (x *Index) insert(slot uint32) {
	lvl := int(x.level[slot])
	if !x.hasEntry {
		x.entry, x.top, x.hasEntry = slot, lvl, true
		return
	}
	q := x.vec(slot)
	s := &x.scratch
	ep := x.greedy(q, lvl, x.graphMetric)
	s.eps = append(s.eps[:0], ep)
	vis := getVisited(len(x.keys))
	defer vis.release()
	for lc := min(lvl, x.top); lc >= 0; lc-- {
		vis.reset() // a layer of its own
		x.searchLayer(q, x.graphMetric, s.eps, x.opt.EfConstruction, lc, vis, nil, &s.cands, &s.res)
		s.sort = s.res.sorted(s.sort)
		s.eps = append(s.eps[:0], s.sort...)
		s.sel = x.selectNeighbours(s.sort, x.m, s.sel)
		s.ids = s.ids[:0]
		for _, c := range s.sel {
			s.ids = append(s.ids, c.id)
		}
		x.setLinks(slot, lc, s.ids)
		for _, c := range s.sel {
			x.linkBack(c.id, slot, c.d, lc)
		}
	}
	if lvl > x.top {
		x.entry, x.top = slot, lvl
	}
}

// linkBack adds a link from node n to node to (at distance d) at layer
// lc; a node with all its links chooses again among them and the new one
// by the heuristic.
func (x *Index) linkBack(n, to uint32, d float32, lc int) {
	ls := x.links(n, lc)
	if len(ls) < x.capacity(lc) {
		x.scratch.tmp = append(append(x.scratch.tmp[:0], ls...), to)
		x.setLinks(n, lc, x.scratch.tmp)
		return
	}
	cands := x.scratch.shrink[:0]
	base := x.vec(n)
	for _, id := range ls {
		cands = append(cands, cand{x.graphMetric.distance(base, x.vec(id)), id})
	}
	cands = append(cands, cand{d, to})
	x.setShrunk(n, lc, cands)
	x.scratch.shrink = cands
}

// setShrunk sets n's links at layer lc to those the heuristic keeps of
// cands (each with its distance to n).
func (x *Index) setShrunk(n uint32, lc int, cands []cand) {
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	x.scratch.shrunk = x.selectNeighbours(cands, x.capacity(lc), x.scratch.shrunk)
	ids := x.scratch.tmp[:0]
	for _, c := range x.scratch.shrunk {
		ids = append(ids, c.id)
	}
	x.setLinks(n, lc, ids)
	x.scratch.tmp = ids
}

// selectNeighbours is the heuristic of the paper's Algorithm 4: of cands
// (nearest first), a candidate is kept when it is nearer to the base
// than to every one already kept, up to m. It spreads a node's links over
// directions rather than spending them on one cluster, which keeps
// clustered data connected.
func (x *Index) selectNeighbours(cands []cand, m int, out []cand) []cand {
	out = out[:0]
	if len(cands) <= m {
		return append(out, cands...)
	}
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		v := x.vec(c.id)
		good := true
		for _, r := range out {
			if x.graphMetric.distance(v, x.vec(r.id)) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// greedy walks down from the entry point to layer floor+1, at each layer
// to the nearest node by m it can reach (ef = 1), and returns it.
func (x *Index) greedy(q []float32, floor int, m Metric) cand {
	cur := cand{m.distance(q, x.vec(x.entry)), x.entry}
	for lc := x.top; lc > floor; lc-- {
		for changed := true; changed; {
			changed = false
			for _, id := range x.links(cur.id, lc) {
				if d := m.distance(q, x.vec(id)); d < cur.d {
					cur, changed = cand{d, id}, true
				}
			}
		}
	}
	return cur
}

// searchLayer is the paper's Algorithm 2: the ef nodes nearest q by m at layer
// lc that accept takes (all when accept is nil), found from eps, left in
// res. It walks through every node, accepted or not, so that a filter or
// tombstones do not cut the graph: it stops when the nearest candidate
// left is farther than the worst of ef accepted results.
func (x *Index) searchLayer(q []float32, m Metric, eps []cand, ef, lc int, vis *visited, accept func(uint32) bool, cands *minHeap, res *maxHeap) {
	*cands, *res = (*cands)[:0], (*res)[:0]
	for _, ep := range eps {
		vis.visit(ep.id)
		cands.push(ep)
		if accept == nil || accept(ep.id) {
			res.push(ep)
			if len(*res) > ef {
				res.pop()
			}
		}
	}
	for len(*cands) > 0 {
		c := cands.pop()
		if len(*res) >= ef && c.d > (*res)[0].d {
			break
		}
		// The unvisited neighbours first, each one's vector asked for as
		// it is found, then their distances: at a million vectors most
		// of a search is waiting for vectors from memory, and this has
		// the waits overlap (as hnswlib prefetches the next neighbour).
		next := x.unvisitedLinks(vis, c.id, lc)
		for _, id := range next {
			d := m.distance(q, x.vec(id))
			if len(*res) < ef || d < (*res)[0].d {
				cands.push(cand{d, id})
				if accept == nil || accept(id) {
					res.push(cand{d, id})
					if len(*res) > ef {
						res.pop()
					}
				}
			}
		}
	}
}

// unvisitedLinks marks the links of node n at layer lc as visited and
// returns those not visited before, in a buffer of vis's; with
// prefetching on, each one's vector is asked for as it is found.
func (x *Index) unvisitedLinks(vis *visited, n uint32, lc int) []uint32 {
	next := vis.next[:0]
	for _, id := range x.links(n, lc) {
		if vis.visit(id) {
			continue
		}
		if usePrefetch {
			prefetch(&x.vecs[int(id)*x.dims], x.dims)
		}
		next = append(next, id)
	}
	vis.next = next
	return next
}
