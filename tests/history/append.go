package history

import (
	"fmt"
	"slices"
)

// AppendOptions tune CheckAppend.
type AppendOptions struct {
	// RealTime adds real-time edges (an op that completed before another
	// was invoked precedes it), so that strict serializability is checked,
	// not only serializability: the *-realtime anomalies and lost appends.
	RealTime bool
	// SearchBudget bounds the edges the cycle searches look at, all kinds
	// together; 0 means DefaultSearchBudget. Finding the components is
	// linear and always done; only the search for an example cycle in
	// them can be costly, and Result.Incomplete says when it stopped.
	// The budget is per kind of cycle.
	SearchBudget int
}

// DefaultSearchBudget lets the search for one kind of cycle in a history
// of 100,000 operations look at each of its edges tens of times over, in
// about a second.
const DefaultSearchBudget = 20_000_000

// version is one appended value of one key.
type version struct {
	key string
	val int64
}

// write is the micro-operation that appended a version.
type write struct {
	op  int
	mop int
}

// read is one ok read micro-operation.
type read struct {
	op   int
	key  string
	vals []int64
}

// appendCheck holds what CheckAppend infers, step by step.
type appendCheck struct {
	ops    []Op
	opt    AppendOptions
	writes map[version]write
	// last is each (op, key)'s last append, to tell an intermediate read.
	last  map[opKey]int64
	reads []read
	// longest is each key's longest read, taken as its version order;
	// longestOp the op that read it.
	longest   map[string][]int64
	longestOp map[string]int
	pos       map[version]int // a version's index in its key's order
	edges     []Edge
	found     []Anomaly
	reported  map[version]Kind
}

type opKey struct {
	op  int
	key string
}

// CheckAppend checks a list-append history, as Elle does: each key's
// version order is its longest read (every other read must be a prefix of
// it); from that order and the reads come the ww, wr and rw edges between
// the transactions that committed or may have (ok and info; an info
// transaction takes part only through what others observed of it); the
// anomalies of single reads are found on the way, and the cycles by
// strongly connected components, then a shortest cycle of each kind.
//
// Cost, for a history of V ops, E edges and R values read in all: O(R) to
// check the reads (one pass over every read list, hashing only the longest
// read per key and the reads that are not its prefix), O(E log d) to
// build the graph (d: the most edges of one op), O(V + E) per component pass (at most 8), and for the
// example cycles at most one breadth-first search, O(V + E), per start
// node tried, bounded in total by the search budget.
//
// Not checked: reads inside a transaction against its own earlier appends
// (Elle's internal consistency), and the G1a/G1b-like anomalies of
// predicates and of the ww order (dirty updates).
func CheckAppend(ops []Op, opt AppendOptions) Result {
	if opt.SearchBudget == 0 {
		opt.SearchBudget = DefaultSearchBudget
	}
	c := &appendCheck{ops: ops, opt: opt, writes: map[version]write{}, last: map[opKey]int64{},
		longest: map[string][]int64{}, longestOp: map[string]int{}, pos: map[version]int{}, reported: map[version]Kind{}}
	c.index()
	c.checkReads()
	c.versionEdges()
	c.readEdges()
	if opt.RealTime {
		c.lostAppends()
		c.realtimeEdges()
	}
	var r Result
	r.Anomalies = c.found
	c.cycles(&r)
	return r
}

func (c *appendCheck) report(a Anomaly) { c.found = append(c.found, a) }

// index records every append's writer and every ok read. Appends of
// failed transactions are recorded too, to name them in a G1a.
func (c *appendCheck) index() {
	for _, op := range c.ops {
		if op.F != FTxn {
			continue
		}
		for i, m := range op.Txn {
			switch m.F {
			case MAppend:
				v := version{m.Key, m.Value}
				if _, dup := c.writes[v]; !dup {
					c.writes[v] = write{op.ID, i}
				}
				c.last[opKey{op.ID, m.Key}] = m.Value
			case MRead:
				if op.Type == OK && m.Read != nil {
					c.reads = append(c.reads, read{op.ID, m.Key, m.Read})
					if len(m.Read) > len(c.longest[m.Key]) || c.longest[m.Key] == nil {
						c.longest[m.Key], c.longestOp[m.Key] = m.Read, op.ID
					}
				}
			}
		}
	}
}

// checkReads checks each key's longest read value by value, then every
// other read against it: a prefix shows nothing the longest does not
// (but a duplicate within its length), anything else is an incompatible
// order, whose values are then checked one by one too.
func (c *appendCheck) checkReads() {
	firstDup := map[string]int{} // length from which a prefix holds a duplicate
	for _, key := range sortedKeys(c.longest) {
		firstDup[key] = c.checkValues(c.longestOp[key], key, c.longest[key], true)
	}
	for _, r := range c.reads {
		l := c.longest[r.key]
		if isPrefix(r.vals, l) {
			if len(r.vals) > firstDup[r.key] && c.longestOp[r.key] != r.op {
				d := l[firstDup[r.key]]
				c.report(Anomaly{Kind: DuplicateAppend, Ops: []int{r.op}, Key: r.key, Value: d,
					Why: fmt.Sprintf("op %d read %d twice in %s", r.op, d, r.key)})
			}
		} else {
			c.report(Anomaly{Kind: IncompatibleOrder, Ops: []int{r.op, c.longestOp[r.key]}, Key: r.key,
				Why: fmt.Sprintf("op %d read %s = %v, not a prefix of op %d's %v", r.op, r.key, r.vals, c.longestOp[r.key], l)})
			c.checkValues(r.op, r.key, r.vals, false)
		}
		c.intermediate(r)
	}
}

// checkValues reports the garbage, aborted and duplicated values of one
// read, each version once, and returns the index of its first duplicate
// (len(vals) if none). Of the longest read, it also records positions.
func (c *appendCheck) checkValues(op int, key string, vals []int64, order bool) int {
	seen := make(map[int64]bool, len(vals))
	firstDup := len(vals)
	for i, val := range vals {
		v := version{key, val}
		if seen[val] {
			firstDup = min(firstDup, i)
			c.report(Anomaly{Kind: DuplicateAppend, Ops: []int{op}, Key: key, Value: val,
				Why: fmt.Sprintf("op %d read %d twice in %s", op, val, key)})
			continue
		}
		seen[val] = true
		if order {
			c.pos[v] = i
		}
		w, ok := c.writes[v]
		switch {
		case !ok && c.reported[v] != GarbageRead:
			c.reported[v] = GarbageRead
			c.report(Anomaly{Kind: GarbageRead, Ops: []int{op}, Key: key, Value: val,
				Why: fmt.Sprintf("op %d read %d in %s, which no op appended", op, val, key)})
		case ok && c.ops[w.op].Type == Fail && c.reported[v] != G1a:
			c.reported[v] = G1a
			c.report(Anomaly{Kind: G1a, Ops: []int{w.op, op}, Key: key, Value: val,
				Why: fmt.Sprintf("op %d read %d in %s, appended by op %d, which failed", op, val, key, w.op)})
		}
	}
	return firstDup
}

// intermediate reports a read whose last value (the version it read) its
// writer followed with another append to the same key: the read saw the
// middle of a transaction. A transaction reading its own is not one.
func (c *appendCheck) intermediate(r read) {
	if len(r.vals) == 0 {
		return
	}
	val := r.vals[len(r.vals)-1]
	w, ok := c.writes[version{r.key, val}]
	if !ok || w.op == r.op || c.ops[w.op].Type == Fail {
		return
	}
	if final := c.last[opKey{w.op, r.key}]; final != val {
		c.report(Anomaly{Kind: G1b, Ops: []int{w.op, r.op}, Key: r.key, Value: val,
			Why: fmt.Sprintf("op %d read %s ending at %d, which op %d followed with %d", r.op, r.key, val, w.op, final)})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isPrefix(a, b []int64) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

// committed says whether an op can take part in the graph: it committed
// (ok), or may have (info: included when observed, which only its writes
// are, since its reads are unknown).
func (c *appendCheck) committed(op int) bool { return c.ops[op].Type != Fail }

// versionEdges adds a ww edge between the writers of each two consecutive
// versions of a key. A version no one wrote, or a failed op wrote, breaks
// the chain there: it is reported already.
func (c *appendCheck) versionEdges() {
	for _, key := range sortedKeys(c.longest) {
		// A value read twice (reported already) counts where first seen.
		var vals []int64
		for i, val := range c.longest[key] {
			if c.pos[version{key, val}] == i {
				vals = append(vals, val)
			}
		}
		for i := 1; i < len(vals); i++ {
			a, okA := c.writes[version{key, vals[i-1]}]
			b, okB := c.writes[version{key, vals[i]}]
			if okA && okB && a.op != b.op && c.committed(a.op) && c.committed(b.op) {
				c.edges = append(c.edges, Edge{From: a.op, To: b.op, Kind: WW, Key: key, Value: vals[i]})
			}
		}
	}
}

// readEdges adds, for each read, a wr edge from the writer of the version
// it read (its last value) and an rw edge to the writer of the next
// version by another transaction, which the read did not see. (The next
// by the same one is an intermediate read, reported as G1b: as an rw edge
// it would make a G-single of every G1b.) A read that is no prefix of the
// order has no next version.
func (c *appendCheck) readEdges() {
	for _, r := range c.reads {
		readFrom := -1
		if n := len(r.vals); n > 0 {
			val := r.vals[n-1]
			if w, ok := c.writes[version{r.key, val}]; ok {
				readFrom = w.op
				if w.op != r.op && c.committed(w.op) {
					c.edges = append(c.edges, Edge{From: w.op, To: r.op, Kind: WR, Key: r.key, Value: val})
				}
			}
		}
		l := c.longest[r.key]
		if !isPrefix(r.vals, l) {
			continue
		}
		i := len(r.vals)
		for ; i < len(l) && readFrom >= 0; i++ {
			if w, ok := c.writes[version{r.key, l[i]}]; !ok || w.op != readFrom {
				break
			}
		}
		if i == len(l) {
			continue
		}
		next := l[i]
		if w, ok := c.writes[version{r.key, next}]; ok && w.op != r.op && c.committed(w.op) {
			c.edges = append(c.edges, Edge{From: r.op, To: w.op, Kind: RW, Key: r.key, Value: next})
		}
	}
}

// lostAppends reports each ok append missing from its key's longest read
// although a read of the key was invoked after the append completed: that
// read must have seen it, and a prefix of the longest read cannot have.
func (c *appendCheck) lostAppends() {
	lastInvoke := map[string]int{}
	lastReader := map[string]int{}
	for _, r := range c.reads {
		if inv := c.ops[r.op].Invoke; inv >= lastInvoke[r.key] {
			lastInvoke[r.key], lastReader[r.key] = inv, r.op
		}
	}
	for _, op := range c.ops {
		if op.F != FTxn || op.Type != OK {
			continue
		}
		for _, m := range op.Txn {
			if m.F != MAppend {
				continue
			}
			if _, ok := c.pos[version{m.Key, m.Value}]; ok {
				continue
			}
			if r, ok := lastReader[m.Key]; ok && lastInvoke[m.Key] > op.Complete {
				c.report(Anomaly{Kind: LostAppend, Ops: []int{op.ID, r}, Key: m.Key, Value: m.Value,
					Why: fmt.Sprintf("op %d appended %d to %s and completed before op %d read it, but no read shows it", op.ID, m.Value, m.Key, r)})
			}
		}
	}
}

// realtimeEdges adds an rt edge from each op to every op invoked after it
// completed, transitively reduced as Elle does: an op invoked links only
// from the frontier, the ops completed that no other completed op follows;
// an op completing replaces its own predecessors in the frontier. The
// frontier is at most the number of concurrent clients, so this adds
// O(V · clients) edges.
func (c *appendCheck) realtimeEdges() {
	type event struct {
		at, op int
		invoke bool
	}
	var events []event
	for _, op := range c.ops {
		if op.F != FTxn || op.Type == Fail {
			continue
		}
		events = append(events, event{op.Invoke, op.ID, true})
		if op.Type == OK {
			events = append(events, event{op.Complete, op.ID, false})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return a.at - b.at })
	frontier := map[int]bool{}
	preds := map[int][]int{}
	for _, e := range events {
		if e.invoke {
			for p := range frontier {
				c.edges = append(c.edges, Edge{From: p, To: e.op, Kind: RT})
				preds[e.op] = append(preds[e.op], p)
			}
			continue
		}
		for _, p := range preds[e.op] {
			delete(frontier, p)
		}
		delete(preds, e.op)
		frontier[e.op] = true
	}
}

// cycles finds the components of the graph and one example cycle of each
// kind, most specific first.
func (c *appendCheck) cycles(r *Result) {
	g := newGraph(len(c.ops), c.edges)
	s := newSearcher(g)
	specs := cycleSpecs
	if c.opt.RealTime {
		specs = append(slices.Clone(cycleSpecs), realtimeSpecs...)
	}
	for _, spec := range specs {
		s.budget = c.opt.SearchBudget
		cycle, exhausted := s.find(spec)
		if exhausted {
			r.Incomplete = append(r.Incomplete, spec.kind)
			continue
		}
		if cycle == nil {
			continue
		}
		ops := make([]int, len(cycle))
		for i, e := range cycle {
			ops[i] = e.From
		}
		a := Anomaly{Kind: spec.kind, Ops: ops, Cycle: cycle}
		a.Why = a.String()
		r.Anomalies = append(r.Anomalies, a)
	}
}
