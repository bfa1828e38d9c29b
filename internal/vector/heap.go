package vector

// cand is a node and its distance to the vector being searched for.
type cand struct {
	d  float32
	id uint32
}

// The two heaps of a layer search, written out rather than through
// container/heap: its interface calls cost a fifth of a search.

// minHeap pops the nearest candidate first.
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d <= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d < s[l].d {
			l = r
		}
		if s[i].d <= s[l].d {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	*h = s
	return top
}

// maxHeap keeps the best results found so far, the worst on top.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d >= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d > s[l].d {
			l = r
		}
		if s[i].d >= s[l].d {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	*h = s
	return top
}

// sorted empties h into out, nearest first.
func (h *maxHeap) sorted(out []cand) []cand {
	n := len(*h)
	out = append(out[:0], make([]cand, n)...)
	for i := n - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out
}
