package kv

import (
	"bytes"
	"sort"
)

// userKeyEnd bounds the user key space: every user key is below it.
var userKeyEnd = []byte{0xFF}

// CompareKeys compares two keys bytewise.
func CompareKeys(a, b []byte) int { return bytes.Compare(a, b) }

// Normalize returns r with a nil End replaced by the end of the user key
// space, so that both bounds are concrete.
func (r Range) Normalize() Range {
	if r.End == nil {
		r.End = userKeyEnd
	}
	return r
}

// Empty reports whether the (normalized) range holds no key.
func (r Range) Empty() bool {
	r = r.Normalize()
	return bytes.Compare(r.Begin, r.End) >= 0
}

// Contains reports whether key lies in r.
func (r Range) Contains(key []byte) bool {
	r = r.Normalize()
	return bytes.Compare(key, r.Begin) >= 0 && bytes.Compare(key, r.End) < 0
}

// Overlaps reports whether the two ranges share a key.
func (r Range) Overlaps(o Range) bool {
	r, o = r.Normalize(), o.Normalize()
	return bytes.Compare(r.Begin, o.End) < 0 && bytes.Compare(o.Begin, r.End) < 0
}

// MergeRanges sorts ranges and merges the ones that overlap or touch. It
// reuses rs and drops empty ranges.
func MergeRanges(rs []Range) []Range {
	out := rs[:0]
	for _, r := range rs {
		r = r.Normalize()
		if !r.Empty() {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Begin, out[j].Begin) < 0 })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && bytes.Compare(r.Begin, merged[n-1].End) <= 0 {
			if bytes.Compare(r.End, merged[n-1].End) > 0 {
				merged[n-1].End = r.End
			}
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// rangeSet is a sorted list of disjoint, non-touching ranges.
type rangeSet []Range

// find returns the index of the range containing key, or -1.
func (s rangeSet) find(key []byte) int {
	i := sort.Search(len(s), func(i int) bool { return bytes.Compare(s[i].End, key) > 0 })
	if i < len(s) && bytes.Compare(s[i].Begin, key) <= 0 {
		return i
	}
	return -1
}

// add inserts r, merging it with the ranges it overlaps or touches.
func (s rangeSet) add(r Range) rangeSet {
	r = r.Normalize()
	if r.Empty() {
		return s
	}
	// lo: first range whose End >= r.Begin; hi: first range whose Begin > r.End.
	lo := sort.Search(len(s), func(i int) bool { return bytes.Compare(s[i].End, r.Begin) >= 0 })
	hi := sort.Search(len(s), func(i int) bool { return bytes.Compare(s[i].Begin, r.End) > 0 })
	if lo < hi {
		if bytes.Compare(s[lo].Begin, r.Begin) < 0 {
			r.Begin = s[lo].Begin
		}
		if bytes.Compare(s[hi-1].End, r.End) > 0 {
			r.End = s[hi-1].End
		}
	}
	out := make(rangeSet, 0, len(s)-(hi-lo)+1)
	out = append(out, s[:lo]...)
	out = append(out, r)
	out = append(out, s[hi:]...)
	return out
}

// subtract returns the parts of r not covered by s, in order.
func (s rangeSet) subtract(r Range) []Range {
	r = r.Normalize()
	var out []Range
	cur := r.Begin
	for _, c := range s {
		if bytes.Compare(c.End, cur) <= 0 {
			continue
		}
		if bytes.Compare(c.Begin, r.End) >= 0 {
			break
		}
		if bytes.Compare(c.Begin, cur) > 0 {
			out = append(out, Range{Begin: cur, End: c.Begin})
		}
		cur = c.End
		if bytes.Compare(cur, r.End) >= 0 {
			return out
		}
	}
	if bytes.Compare(cur, r.End) < 0 {
		out = append(out, Range{Begin: cur, End: r.End})
	}
	return out
}
