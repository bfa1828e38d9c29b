package vector

import "slices"

// compactEvery is the share of tombstones among the nodes at which they
// are unlinked and their slots freed: the graph never holds more than
// this share of dead nodes (searches walk through them), and the
// slots in use never exceed the most live keys by more than about as
// much, however many replaces and deletes come.
const compactEvery = 0.1

func (x *Index) compactIfDue() {
	if x.tombstones > 0 && float64(x.tombstones) >= compactEvery*float64(len(x.ids)+x.tombstones) {
		x.compact()
	}
}

// compact unlinks every tombstone and frees its slot. A live node that
// linked to tombstones chooses its links again, by the heuristic, among
// its live links and the live links of those tombstones (the nodes it
// reached through them), so that the graph stays connected where they
// were. Then the entry point is moved if it was a tombstone.
func (x *Index) compact() {
	vis := getVisited(len(x.keys))
	defer vis.release()
	var cands []cand
	for slot, st := range x.state {
		if st != live {
			continue
		}
		n := uint32(slot)
		for lc := 0; lc <= int(x.level[n]); lc++ {
			ls := x.links(n, lc)
			if !slices.ContainsFunc(ls, func(id uint32) bool { return x.state[id] == tombstone }) {
				continue
			}
			vis.reset()
			vis.visit(n)
			cands = cands[:0]
			base := x.vec(n)
			add := func(id uint32) {
				if x.state[id] == live && !vis.visit(id) {
					cands = append(cands, cand{x.graphMetric.distance(base, x.vec(id)), id})
				}
			}
			for _, id := range ls {
				if x.state[id] == tombstone {
					for _, via := range x.links(id, lc) {
						add(via)
					}
				} else {
					add(id)
				}
			}
			x.setShrunk(n, lc, cands)
		}
	}
	for slot, st := range x.state {
		if st == tombstone {
			x.state[slot] = free
			x.keys[slot] = ""
			x.upper[slot] = nil
			x.links0[slot*(x.m0+1)] = 0
			x.free = append(x.free, uint32(slot))
		}
	}
	x.tombstones = 0
	if x.hasEntry && x.state[x.entry] == free {
		x.chooseEntry()
	}
}

// chooseEntry makes a linked node (live, or a tombstone when it reads
// a snapshot) of the highest level the entry point.
func (x *Index) chooseEntry() {
	x.hasEntry, x.top = false, -1
	for slot, st := range x.state {
		if st != free && int(x.level[slot]) > x.top {
			x.entry, x.top, x.hasEntry = uint32(slot), int(x.level[slot]), true
		}
	}
}
