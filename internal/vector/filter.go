package vector

import "iter"

// Filter is the set of keys a search may return. The search asks its
// size first: a small set is scanned exactly (Keys), a larger one is
// searched in the graph (Allows on every node the search reaches).
type Filter interface {
	// Allows reports whether key may be returned.
	Allows(key string) bool
	// Len is the number of keys allowed (an upper bound serves: it only
	// chooses between the scan and the graph).
	Len() int
	// Keys yields each allowed key once (keys without a vector are
	// skipped).
	Keys() iter.Seq[string]
}

// Set is a Filter of the keys it holds.
type Set map[string]struct{}

// NewSet returns the set of keys.
func NewSet(keys ...string) Set {
	s := make(Set, len(keys))
	for _, k := range keys {
		s[k] = struct{}{}
	}
	return s
}

func (s Set) Allows(key string) bool { _, ok := s[key]; return ok }
func (s Set) Len() int               { return len(s) }
func (s Set) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}
}

// The choice between scanning the allowed keys and searching the graph.
// A scan costs one distance (and a key looked up) per allowed key: s·n
// for a filter keeping a share s of n keys. The graph, which takes only
// allowed nodes as results, reaches about ef/s nodes before it holds ef
// of them, and computes a distance for each new link of each: a cost
// that grows as 1/s and hardly with n. The two cross where
// s·n = c·ef/s, at allowed = s·n = sqrt(c·ef·n): measured
// (BenchmarkFilterCrossing, 50,000 vectors of 128 dimensions, ef 64;
// docs/benchmarks.md) between 10% (scan 1.2 ms, graph 1.3 ms) and 20%
// (3.0 against 0.4), so c = 12. Below scanAlways keys the scan is taken
// whatever the size and ef: tens of µs, as long as a graph search.
const (
	scanAlways = 256
	scanCost   = 12
)

// scanIsCheaper reports whether a filter allowing allowed of live keys
// is better scanned than searched in the graph with breadth ef.
func scanIsCheaper(allowed, live, ef int) bool {
	a := float64(allowed)
	return allowed <= scanAlways || a*a <= scanCost*float64(ef)*float64(live)
}
