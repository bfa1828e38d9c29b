package history

import (
	"cmp"
	"slices"
)

// EdgeKind is a kind of dependency between two committed transactions.
// The values are bits, so that a search can allow a set of kinds.
type EdgeKind uint8

const (
	// WW: the later transaction appended the next version of a key after
	// the earlier one's (Adya's write dependency).
	WW EdgeKind = 1 << iota
	// WR: the later transaction read a version the earlier one appended.
	WR
	// RW: the earlier transaction read a version that the later one's
	// append replaced (Adya's anti-dependency).
	RW
	// RT: the earlier transaction completed before the later one was
	// invoked (real time; used for strict serializability only).
	RT
)

func (k EdgeKind) String() string {
	switch k {
	case WW:
		return "ww"
	case WR:
		return "wr"
	case RW:
		return "rw"
	case RT:
		return "rt"
	}
	return "?"
}

// Edge is one dependency, and the key and version that show it.
type Edge struct {
	From, To int // op IDs
	Kind     EdgeKind
	Key      string // none for RT
	Value    int64  // the version read or appended that shows the edge
}

// graph is the dependency graph in compressed adjacency form: the edges
// sorted by From, those of node v at edges[start[v]:start[v+1]]. Building
// it is linear but for sorting each node's own edges; everything after is
// linear per pass.
type graph struct {
	start []int32
	edges []Edge
}

func newGraph(n int, edges []Edge) *graph {
	// Bucket by From (linear), then sort each node's few edges.
	bucket := make([]int32, n+1)
	for _, e := range edges {
		bucket[e.From+1]++
	}
	for v := range n {
		bucket[v+1] += bucket[v]
	}
	sorted := make([]Edge, len(edges))
	fill := slices.Clone(bucket[:n])
	for _, e := range edges {
		sorted[fill[e.From]] = e
		fill[e.From]++
	}
	g := &graph{start: make([]int32, n+1), edges: sorted[:0]}
	for v := range n {
		out := sorted[bucket[v]:bucket[v+1]]
		slices.SortStableFunc(out, func(a, b Edge) int { return cmp.Or(cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind)) })
		// One edge per (from, to, kind) is enough to search; the first
		// found is kept as its explanation.
		out = slices.CompactFunc(out, func(a, b Edge) bool { return a.To == b.To && a.Kind == b.Kind })
		g.edges = append(g.edges, out...) // never overtakes the reading: out is at or after it
		g.start[v+1] = int32(len(g.edges))
	}
	return g
}

func (g *graph) n() int { return len(g.start) - 1 }

func (g *graph) out(v int) []Edge { return g.edges[g.start[v]:g.start[v+1]] }

// components are the strongly connected components of the graph restricted
// to the edges of the kinds in mask (Tarjan's algorithm, iterative so that
// a long chain of transactions cannot overflow the stack): comp[v] names
// v's component and size[c] is the number of nodes in component c.
// O(V + E).
func (g *graph) components(mask EdgeKind) (comp, size []int32) {
	n := g.n()
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	comp = make([]int32, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	type frame struct{ v, next int32 }
	var calls []frame
	next := int32(0)
	visit := func(v int32) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		calls = append(calls, frame{v, g.start[v]})
	}
	for s := range int32(n) {
		if index[s] >= 0 {
			continue
		}
		visit(s)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < g.start[v+1] {
				e := g.edges[f.next]
				f.next++
				if e.Kind&mask == 0 {
					continue
				}
				w := int32(e.To)
				if index[w] < 0 {
					visit(w)
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				c := int32(len(size))
				size = append(size, 0)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = c
					size[c]++
					if w == v {
						break
					}
				}
			}
		}
	}
	return comp, size
}

// cycleSpec says which cycles make an anomaly. Every such cycle is found
// as one closing edge u→v of kind closing, then a shortest path from v
// back to u over edges of kinds path, with the number of RW edges on the
// whole cycle between minRW and maxRW (counted up to 2, so maxRW 2 means
// any number from 2 on), and at least one WR edge when needWR.
type cycleSpec struct {
	kind         Kind
	closing      EdgeKind
	path         EdgeKind
	minRW, maxRW int
	needWR       bool
}

// The cycles of Adya's definitions, in the order they are searched. Each
// is the most specific name for its cycle: one of ww edges only is G0, not
// also reported as G1c, though Adya's G1c (and G2) include it.
var cycleSpecs = []cycleSpec{
	{kind: G0, closing: WW, path: WW},
	{kind: G1c, closing: WR, path: WW | WR},
	{kind: GSingle, closing: RW, path: WW | WR, minRW: 1, maxRW: 1},
	{kind: G2, closing: RW, path: WW | WR | RW, minRW: 2, maxRW: 2},
}

// With real-time edges, the same cycles that need one to close are the
// strict-serializability anomalies; a closing RT edge guarantees one.
var realtimeSpecs = []cycleSpec{
	{kind: G0Realtime, closing: RT, path: WW | RT},
	{kind: G1cRealtime, closing: RT, path: WW | WR | RT, needWR: true},
	{kind: GSingleRealtime, closing: RT, path: WW | WR | RW | RT, minRW: 1, maxRW: 1},
	{kind: G2Realtime, closing: RT, path: WW | WR | RW | RT, minRW: 2, maxRW: 2},
}

// searcher finds example cycles. Its arrays are indexed by search state
// (node, RW edges so far up to 2, WR seen), stamped per search so that
// each breadth-first search costs only what it visits.
type searcher struct {
	g      *graph
	budget int // edges left to look at, set per kind of cycle
	seen   []int32
	parent []int32 // the edge index that reached a state
	from   []int32 // the state it came from
	target []int32 // stamp: node is the source of a closing edge into the start
	stamp  int32
	comps  map[EdgeKind][2][]int32
}

const statesPerNode = 6

func newSearcher(g *graph) *searcher {
	n := g.n()
	return &searcher{g: g, seen: make([]int32, n*statesPerNode), parent: make([]int32, n*statesPerNode),
		from: make([]int32, n*statesPerNode), target: make([]int32, n), comps: map[EdgeKind][2][]int32{}}
}

func state(v, rw int, wr bool) int {
	s := v*statesPerNode + rw*2
	if wr {
		s++
	}
	return s
}

// find returns one cycle of spec as its edges, starting with the closing
// one, or nil; exhausted is true when the budget ran out first. Only
// closing edges inside one component of the allowed kinds can close a
// cycle, and the search from v stays in v's component. Each distinct v is
// searched once for all closing edges into it: O(V + E) per start, for as
// many starts as it takes to find one cycle.
func (s *searcher) find(spec cycleSpec) (cycle []Edge, exhausted bool) {
	mask := spec.closing | spec.path
	cs, ok := s.comps[mask]
	if !ok {
		comp, size := s.g.components(mask)
		cs = [2][]int32{comp, size}
		s.comps[mask] = cs
	}
	comp, size := cs[0], cs[1]
	var closing []Edge
	for _, e := range s.g.edges {
		if e.Kind == spec.closing && e.From != e.To && comp[e.From] == comp[e.To] && size[comp[e.From]] > 1 {
			closing = append(closing, e)
		}
	}
	slices.SortFunc(closing, func(a, b Edge) int { return cmp.Or(cmp.Compare(a.To, b.To), cmp.Compare(a.From, b.From)) })
	for i := 0; i < len(closing); {
		v := closing[i].To
		s.stamp++
		j := i
		for ; j < len(closing) && closing[j].To == v; j++ {
			s.target[closing[j].From] = s.stamp
		}
		rw0 := 0
		if spec.closing == RW {
			rw0 = 1
		}
		end, out := s.bfs(spec, v, comp, rw0, spec.closing == WR)
		if out {
			return nil, true
		}
		if end >= 0 {
			u := end / statesPerNode
			var path []Edge
			for st := end; st != state(v, rw0, spec.closing == WR); st = int(s.from[st]) {
				path = append(path, s.g.edges[s.parent[st]])
			}
			slices.Reverse(path)
			for _, e := range closing[i:j] {
				if e.From == u && simple(path) {
					return append([]Edge{e}, path...), false
				}
			}
		}
		i = j
	}
	return nil, false
}

// simple says a path from v back to u visits no node twice, so that with
// its closing edge it is a cycle, not a cycle walked round again to count
// one more edge of a kind. The states of the search can make such walks;
// the search then goes on from the next start, and may miss a simple
// cycle that only a longer path makes (deciding whether one exists is
// hard in general). Such a history still shows the shorter cycle's kind.
func simple(path []Edge) bool {
	seen := make(map[int]bool, len(path))
	for _, e := range path {
		if seen[e.To] {
			return false
		}
		seen[e.To] = true
	}
	return true
}

// bfs searches from v for a state at a target node that completes spec's
// cycle; it returns that state, or -1, and whether the budget ran out.
func (s *searcher) bfs(spec cycleSpec, v int, comp []int32, rw0 int, wr0 bool) (end int, exhausted bool) {
	start := state(v, rw0, wr0)
	s.seen[start] = s.stamp
	queue := []int{start}
	for head := 0; head < len(queue); head++ {
		st := queue[head]
		x, rw, wr := st/statesPerNode, st%statesPerNode/2, st%2 == 1
		if s.target[x] == s.stamp {
			if rw >= spec.minRW && (wr || !spec.needWR) {
				return st, false
			}
			// Going on through the closing edge's source would close the
			// cycle twice: no simple cycle goes that way.
			continue
		}
		for k := s.g.start[x]; k < s.g.start[x+1]; k++ {
			s.budget--
			if s.budget < 0 {
				return -1, true
			}
			e := s.g.edges[k]
			if e.Kind&spec.path == 0 || comp[e.To] != comp[v] || e.To == v {
				continue
			}
			nrw, nwr := rw, wr || e.Kind == WR
			if e.Kind == RW {
				nrw = min(rw+1, 2)
			}
			if nrw > spec.maxRW {
				continue
			}
			ns := state(e.To, nrw, nwr)
			if s.seen[ns] == s.stamp {
				continue
			}
			s.seen[ns], s.parent[ns], s.from[ns] = s.stamp, int32(k), int32(st)
			queue = append(queue, ns)
		}
	}
	return -1, false
}
