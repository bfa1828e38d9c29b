package vector

import "sync"

// visited marks the nodes a search has reached. A mark is the search's
// generation, so that a new search clears nothing (as hnswlib's visited
// lists do); the marks are cleared only when the generation wraps.
type visited struct {
	marks []uint16
	gen   uint16
	next  []uint32 // searchLayer's buffer of a node's unvisited links
}

var visitedPool = sync.Pool{New: func() any { return new(visited) }}

// getVisited returns marks for slots nodes, none set.
func getVisited(slots int) *visited {
	v := visitedPool.Get().(*visited)
	if len(v.marks) < slots {
		v.marks = make([]uint16, slots+slots/4)
		v.gen = 0
	}
	v.reset()
	return v
}

// reset unmarks every node.
func (v *visited) reset() {
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}

func (v *visited) release() { visitedPool.Put(v) }

// visit marks id and reports whether it was marked before.
func (v *visited) visit(id uint32) bool {
	if v.marks[id] == v.gen {
		return true
	}
	v.marks[id] = v.gen
	return false
}
