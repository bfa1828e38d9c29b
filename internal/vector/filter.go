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

// The choice between scanning the allowed keys and searching the graph
// (measured in docs/benchmarks.md, "Issue 37: vector search"). A scan
// costs one distance per allowed key; the graph, with a filter that
// keeps a fraction s of the nodes, reaches about ef/s nodes and computes
// a distance for each of their links that is new. The scan is taken
// when the allowed keys are at most scanAlways, or at most scanFraction
// of the live keys.
const (
	scanAlways   = 2000
	scanFraction = 0.03
)

// scanIsCheaper reports whether a filter allowing allowed of live keys
// is better scanned than searched in the graph.
func scanIsCheaper(allowed, live int) bool {
	return allowed <= scanAlways || float64(allowed) <= scanFraction*float64(live)
}
