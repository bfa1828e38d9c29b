package history

import (
	"math/rand/v2"
	"testing"
)

// TestComponentsAgainstReachability: on random graphs of a few kinds of
// edge, two nodes share a component exactly when each reaches the other
// over edges of the kinds asked for, and a component's size counts its
// nodes.
func TestComponentsAgainstReachability(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 46))
	for run := range 300 {
		n := 1 + rng.IntN(12)
		var edges []Edge
		for range rng.IntN(3 * n) {
			edges = append(edges, Edge{From: rng.IntN(n), To: rng.IntN(n), Kind: EdgeKind(1 << rng.IntN(4))})
		}
		mask := EdgeKind(1 + rng.IntN(15))
		reach := make([][]bool, n) // reach[a][b]: a path from a to b, or a == b
		for a := range n {
			reach[a] = make([]bool, n)
			reach[a][a] = true
		}
		for changed := true; changed; {
			changed = false
			for _, e := range edges {
				if e.Kind&mask == 0 {
					continue
				}
				for a := range n {
					if reach[a][e.From] && !reach[a][e.To] {
						reach[a][e.To], changed = true, true
					}
				}
			}
		}
		comp, size := newGraph(n, edges).components(mask)
		for a := range n {
			members := 0
			for b := range n {
				together := reach[a][b] && reach[b][a]
				if together {
					members++
				}
				if (comp[a] == comp[b]) != together {
					t.Fatalf("run %d: nodes %d and %d in components %d and %d, reach each other %v; edges %+v, mask %b",
						run, a, b, comp[a], comp[b], together, edges, mask)
				}
			}
			if int(size[comp[a]]) != members {
				t.Fatalf("run %d: node %d's component has size %d, want %d; edges %+v, mask %b", run, a, size[comp[a]], members, edges, mask)
			}
		}
	}
}
