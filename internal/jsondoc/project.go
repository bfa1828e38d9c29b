package jsondoc

import (
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
)

// Project returns doc with only the members named in include (in the
// document's own order), or without those in exclude; with both empty it
// returns doc itself. A name is a member's key or a dot path to a nested
// one ("addr.city"): an included nested member comes back inside its
// enclosing objects ({"addr":{"city":"Oslo"}}), as the original returned
// it, and an object left with no included member is left out; an excluded
// one is removed from its object. A path through a value that is not an
// object names nothing. Documents, messages and search hits are projected
// by this one rule.
func Project(doc []byte, include, exclude map[string]bool) ([]byte, error) {
	if len(include) == 0 && len(exclude) == 0 {
		return doc, nil
	}
	out := make([]byte, 0, len(doc))
	if len(include) > 0 {
		out, _, err := projectObject(out, doc, jsonscan.SkipSpace(doc, 0), pathsOf(include), true)
		return out, err
	}
	out, _, err := projectObject(out, doc, jsonscan.SkipSpace(doc, 0), pathsOf(exclude), false)
	return out, err
}

// paths is a set of dot paths as a tree: a key mapped to nil names the
// whole member, to paths only those members of its value.
type paths map[string]paths

// pathsOf turns names into a tree. A whole member named beside paths
// into it ("addr" and "addr.city") is taken whole.
func pathsOf(names map[string]bool) paths {
	root := paths{}
	for name := range names {
		node := root
		for {
			key, rest, nested := strings.Cut(name, ".")
			sub, seen := node[key]
			if !nested || (seen && sub == nil) {
				node[key] = nil
				break
			}
			if sub == nil {
				sub = paths{}
				node[key] = sub
			}
			node, name = sub, rest
		}
	}
	return root
}

// projectObject appends the object at doc[at] projected by p: keeping
// only what p names (include) or all but it, and reports how many members
// it kept.
func projectObject(out, doc []byte, at int, p paths, include bool) ([]byte, int, error) {
	ms, _, err := Members(doc, at)
	if err != nil {
		return nil, 0, err
	}
	out = append(out, '{')
	kept := 0
	for _, m := range ms {
		sub, named := p[m.Key]
		whole := named && sub == nil
		mark := len(out)
		if kept > 0 {
			out = append(out, ',')
		}
		switch {
		case sub != nil && jsonscan.KindAt(doc, m.ValueStart) == jsonscan.Object:
			out = append(out, doc[m.Start:m.ValueStart]...) // the key and colon
			var n int
			if out, n, err = projectObject(out, doc, m.ValueStart, sub, include); err != nil {
				return nil, 0, err
			}
			if include && n == 0 {
				out = out[:mark] // nothing of it was asked for
				continue
			}
		case whole == include:
			// Included, or not excluded (a path into what is not an
			// object names nothing).
			out = append(out, doc[m.Start:m.End]...)
		default:
			out = out[:mark]
			continue
		}
		kept++
	}
	return append(out, '}'), kept, nil
}
