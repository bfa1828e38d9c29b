package filter

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// pathTree holds the distinct paths a filter compares, as a tree of their
// segments, so that one walk over a document finds the value of each. Its
// nodes lie in one slice and a node's children are a list, found by
// comparing names: a filter names a few paths, and a filter is parsed for
// every request, where a map per node cost an allocation each.
type pathTree struct {
	nodes []pathNode // nodes[0] is the root
	slots int        // number of distinct paths
}

type pathNode struct {
	seg   string // the segment from the parent to here
	slot  int    // index of the path ending here, or -1
	first int    // the first child's index in nodes, or 0 for none
	next  int    // the next sibling's index in nodes, or 0 for none
}

// newPathTree numbers the distinct paths the nodes under root compare
// (setting each node's slot) and builds their tree.
func newPathTree(root Node) pathTree {
	t := pathTree{nodes: make([]pathNode, 1, 4)}
	t.nodes[0].slot = -1
	walk(root, func(n Node) {
		switch n := n.(type) {
		case *Comparison:
			n.slot = t.add(n.Path)
		case *Elements:
			n.slot = t.add(n.Path)
		case *ArrayEquals:
			n.slot = t.add(n.Path)
		case *Exists:
			n.slot = t.add(n.Path)
		case *Like:
			n.slot = t.add(n.Path)
		case *Within:
			n.slot = t.add(n.array)
		}
	})
	return t
}

// add returns the slot of path, numbering it and adding it to the tree if
// it is new.
func (t *pathTree) add(path string) int {
	n := 0
	for rest, more := path, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, ".")
		child := t.child(n, seg)
		if child == 0 {
			child = len(t.nodes)
			t.nodes = append(t.nodes, pathNode{seg: seg, slot: -1, next: t.nodes[n].first})
			t.nodes[n].first = child
		}
		n = child
	}
	if t.nodes[n].slot < 0 {
		t.nodes[n].slot = t.slots
		t.slots++
	}
	return t.nodes[n].slot
}

// child returns the index of node n's child named seg, or 0.
func (t *pathTree) child(n int, seg string) int {
	for c := t.nodes[n].first; c != 0; c = t.nodes[c].next {
		if t.nodes[c].seg == seg {
			return c
		}
	}
	return 0
}

// childKey is child for a member's unescaped name, as the document holds
// it (the comparison converts without copying).
func (t *pathTree) childKey(n int, key []byte) int {
	for c := t.nodes[n].first; c != 0; c = t.nodes[c].next {
		if t.nodes[c].seg == string(key) {
			return c
		}
	}
	return 0
}

// span is where a value lies in a document; start < 0 when it was not found.
type span struct{ start, end int }

// errAllFound stops a document walk once every path has been found.
var errAllFound = errors.New("all paths found")

// Matches reports whether the document doc (a JSON object) satisfies the
// filter. It reads the document once, in place, extracting only the values
// the filter compares, and stops reading once it has them all; it does not
// validate the document. Per type:
//   - integers compare exactly as int64, numbers as float64;
//   - strings, uuids and date-times compare bytewise, after index.Fold on both
//     sides when CaseInsensitive;
//   - bytes compare after base64 decoding; false sorts before true;
//   - a missing or null value, or one of the wrong JSON type, never matches.
//
// doc must be valid JSON, as every stored document is: the values the
// filter does not name are skipped without being checked. The error is
// non-nil when what Matches read of doc is not valid JSON, and, an *Error
// for the client, when a $regex would cost too much on doc's value
// (MaxRegexWork).
func (f Filter) Matches(doc []byte) (bool, error) {
	return f.MatchesAt(doc, Times{})
}

// MatchesAt is Matches for a document whose times are ts, which the
// filter's _tigris_created_at and _tigris_updated_at compare (times.go).
func (f Filter) MatchesAt(doc []byte, ts Times) (bool, error) {
	if f.Root == nil {
		return true, nil
	}
	if len(f.paths.nodes) == 0 {
		return false, errors.New("filter: Matches on a Filter not built by Parse")
	}
	var buf [8]span
	spans := buf[:0]
	if f.paths.slots > len(buf) {
		spans = make([]span, 0, f.paths.slots)
	}
	for range f.paths.slots {
		spans = append(spans, span{-1, -1})
	}
	start := jsonscan.SkipSpace(doc, 0)
	if jsonscan.KindAt(doc, start) != jsonscan.Object {
		if _, _, err := jsonscan.Whole(doc); err != nil {
			return false, fmt.Errorf("filter: document: %w", err)
		}
		return false, nil
	}
	remaining := f.paths.slots
	if _, err := collect(doc, start, &f.paths, 0, spans, &remaining); err != nil && err != errAllFound {
		return false, fmt.Errorf("filter: document: %w", err)
	}
	if len(f.regexes) > 0 {
		if err := f.regexCost(spans); err != nil {
			return false, err
		}
	}
	return eval(f.Root, doc, spans, &ts), nil
}

// collect walks the object at doc[i], recording in spans the value of every
// path under t's node n, and returns where the object ends.
func collect(doc []byte, i int, t *pathTree, n int, spans []span, remaining *int) (int, error) {
	o, err := jsonscan.ObjectAt(doc, i)
	if err != nil {
		return 0, err
	}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return o.End(), nil
		}
		var c int
		if escaped {
			c = t.child(n, jsonscan.Unquote(key))
		} else {
			c = t.childKey(n, key)
		}
		switch {
		case c == 0:
			if err := skipMember(&o, doc, v); err != nil {
				return 0, err
			}
		case t.nodes[c].slot >= 0:
			slot := t.nodes[c].slot
			e, err := jsonscan.End(doc, v)
			if err != nil {
				return 0, err
			}
			// The first occurrence counts, as for key extraction; validated
			// documents have no duplicate members anyway.
			if spans[slot].start < 0 {
				spans[slot] = span{v, e}
				if *remaining--; *remaining == 0 {
					return 0, errAllFound
				}
			}
			o.Resume(e)
		case jsonscan.KindAt(doc, v) == jsonscan.Object:
			e, err := collect(doc, v, t, c, spans, remaining)
			if err != nil {
				return 0, err
			}
			o.Resume(e)
		default:
			if err := skipMember(&o, doc, v); err != nil {
				return 0, err
			}
		}
	}
}

// skipMember moves o past a member the filter does not name, whose value
// is at doc[v]. Documents are valid JSON (checked when they were written),
// so its end is found without checking what it holds: a mail body of 4 KB
// is skipped in a tenth of the time (BenchmarkSkip in jsonscan).
func skipMember(o *jsonscan.ObjectReader, doc []byte, v int) error {
	e, err := jsonscan.SkipValid(doc, v)
	if err != nil {
		return err
	}
	o.Resume(e)
	return nil
}

func eval(n Node, doc []byte, spans []span, ts *Times) bool {
	switch n := n.(type) {
	case *And:
		for _, c := range n.Nodes {
			if !eval(c, doc, spans, ts) {
				return false
			}
		}
		return true
	case *Or:
		for _, c := range n.Nodes {
			if eval(c, doc, spans, ts) {
				return true
			}
		}
		return false
	case *Comparison:
		sp := spans[n.slot]
		return sp.start >= 0 && n.holds(doc[sp.start:sp.end])
	case *Elements:
		sp := spans[n.slot]
		return sp.start >= 0 && anyElement(doc[sp.start:sp.end], n.Comparisons)
	case *ArrayEquals:
		sp := spans[n.slot]
		return sp.start >= 0 && equalElements(doc[sp.start:sp.end], n.Elements)
	case *Time:
		return n.holds(ts)
	case *Within:
		sp := spans[n.slot]
		return sp.start >= 0 && n.holds(doc[sp.start:sp.end])
	case *Not:
		return !eval(n.Node, doc, spans, ts)
	case *Exists:
		return n.holds(doc, spans[n.slot])
	case *Like:
		sp := spans[n.slot]
		return sp.start >= 0 && n.holds(doc[sp.start:sp.end])
	}
	return false
}

// holds reports whether the comparison holds for the JSON value val.
func (c *Comparison) holds(val []byte) bool {
	cmp, ok := c.compare(val)
	return ok && c.Op.holds(cmp)
}

// anyElement reports whether arr is a JSON array with an element for
// which every one of cs holds.
func anyElement(arr []byte, cs []*Comparison) bool {
	found := false
	eachElement(arr, func(elem []byte) bool {
		found = true
		for _, c := range cs {
			if !c.holds(elem) {
				found = false
				break
			}
		}
		return !found
	})
	return found
}

// equalElements reports whether arr is a JSON array whose elements are,
// one by one, those that the $eq comparisons cs want.
func equalElements(arr []byte, cs []*Comparison) bool {
	i := 0
	complete := eachElement(arr, func(elem []byte) bool {
		if i == len(cs) || !cs[i].holds(elem) {
			i = -1
			return false
		}
		i++
		return true
	})
	return complete && i == len(cs)
}

// eachElement calls fn with each element of the JSON array arr while fn
// returns true, and reports whether it went through the whole array: false
// too when arr is not an array (or not valid JSON where it was read).
func eachElement(arr []byte, fn func(elem []byte) bool) bool {
	if jsonscan.KindAt(arr, 0) != jsonscan.Array {
		return false
	}
	a, err := jsonscan.ArrayAt(arr, 0)
	if err != nil {
		return false
	}
	for {
		v, ok, err := a.Next()
		if err != nil {
			return false
		}
		if !ok {
			return true
		}
		e, err := jsonscan.End(arr, v)
		if err != nil {
			return false
		}
		if !fn(arr[v:e]) {
			return false
		}
		a.Resume(e)
	}
}

// compare compares the JSON value val of a document with the comparison's
// value. ok is false when val cannot be compared (null, wrong JSON type).
func (c *Comparison) compare(val []byte) (cmp int, ok bool) {
	kind := jsonscan.KindAt(val, 0)
	switch c.Type {
	case schema.Int32, schema.Int64:
		if kind != jsonscan.Number {
			return 0, false
		}
		n, ok := jsonscan.ParseInt(val)
		if !ok {
			return 0, false
		}
		want := c.Value.(int64)
		return cmpOrdered(n, want), true
	case schema.Number:
		if kind != jsonscan.Number {
			return 0, false
		}
		x, err := strconv.ParseFloat(string(val), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return cmpOrdered(x, c.Value.(float64)), true
	case schema.Bool:
		if kind != jsonscan.Bool {
			return 0, false
		}
		b, want := val[0] == 't', c.Value.(bool)
		switch {
		case b == want:
			return 0, true
		case want:
			return -1, true
		}
		return 1, true
	case schema.String, schema.UUID, schema.DateTime:
		if kind != jsonscan.String {
			return 0, false
		}
		s := val[1 : len(val)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			var buf [128]byte
			s = jsonscan.AppendUnquote(buf[:0], s)
		}
		if c.CaseInsensitive {
			return compareFolded(s, c.folded), true
		}
		return bytes.Compare(s, c.raw), true
	case schema.Bytes:
		if kind != jsonscan.String {
			return 0, false
		}
		s := val[1 : len(val)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			s = jsonscan.AppendUnquote(nil, s)
		}
		var buf [128]byte
		dst := buf[:]
		if n := base64.StdEncoding.DecodedLen(len(s)); n > len(dst) {
			dst = make([]byte, n)
		}
		n, err := base64.StdEncoding.Decode(dst, s)
		if err != nil {
			return 0, false
		}
		return bytes.Compare(dst[:n], c.raw), true
	}
	return 0, false
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareFolded compares index.Fold(string(s)) with folded, which is already
// folded, without building the folded copy of s. strings.ToLower maps rune
// by rune with unicode.ToLower and turns invalid UTF-8 into U+FFFD, which is
// what utf8.DecodeRune yields for it, so the bytes compared are the same.
func compareFolded(s []byte, folded string) int {
	j := 0
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		var lowered []byte
		if c := s[i]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			enc[0] = c
			lowered = enc[:1]
			i++
		} else {
			r, n := utf8.DecodeRune(s[i:])
			lowered = enc[:utf8.EncodeRune(enc[:], unicode.ToLower(r))]
			i += n
		}
		for _, b := range lowered {
			if j == len(folded) {
				return 1
			}
			if b != folded[j] {
				if b < folded[j] {
					return -1
				}
				return 1
			}
			j++
		}
	}
	if j < len(folded) {
		return -1
	}
	return 0
}
