package filter

import (
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// Fields reached through arrays: a field of the objects of an array
// ({"arr_obj.name":"x"}, {"obj.array_obj.university":"x"}), the elements
// of an array inside such objects ({"arr_obj.zipcodes":"x"}), and the
// elements of the inner arrays of an array of arrays ({"arr_of_arr":"x"}).
// As in the final Tigris server, such a filter holds when some value
// reached there does. Folio's indexes hold no entries inside arrays of
// objects or of arrays (index.Entries), so the planner leaves these to
// the check of each candidate document: a read with no other condition
// that an index serves scans the collection.

// Within holds when some value reached at Path, through every element of
// the arrays on the way, satisfies all of Comparisons (on one value
// together, as Elements does). The comparisons are of the values' schema
// type, and Path is theirs.
type Within struct {
	Path        string
	Comparisons []*Comparison

	array string   // the outermost array's path, reached through objects
	rest  []string // the members to follow from its elements to the values
	slot  int      // of array
}

func (*Within) node() {}

// within resolves path when it reaches through an array: it returns the
// scalar field of the values reached, the outermost array's path and the
// members after it. ok is false when path is no such field.
func (p *parser) within(path string) (leaf *schema.Field, array string, rest []string, ok bool) {
	segs := strings.Split(path, ".")
	var outer *schema.Field
	for k := 1; k <= len(segs) && outer == nil; k++ {
		f, found := p.fields.Field(strings.Join(segs[:k], "."))
		if !found {
			return nil, "", nil, false
		}
		if f.Type == schema.Array {
			outer, rest = f, segs[k:]
		}
	}
	if outer == nil {
		return nil, "", nil, false
	}
	cur := outer
	for _, seg := range rest {
		for cur.Type == schema.Array && cur.Items != nil {
			cur = cur.Items
		}
		var next *schema.Field
		if cur.Type == schema.Object {
			for _, prop := range cur.Properties {
				if prop.Name == seg {
					next = prop
				}
			}
		}
		if next == nil {
			return nil, "", nil, false
		}
		cur = next
	}
	depth := 0
	for cur.Type == schema.Array && cur.Items != nil {
		cur, depth = cur.Items, depth+1
	}
	// An array of scalars named by its own path is an Elements, not this.
	if !cur.Type.Scalar() || (len(rest) == 0 && depth < 2) {
		return nil, "", nil, false
	}
	return cur, outer.Path, rest, true
}

// withinField parses the conditions on a field reached through an array,
// whose values are of the field leaf: a value, or an object of the
// comparisons, $in and $ne.
func (p *parser) withinField(path string, leaf *schema.Field, array string, rest []string, v int) ([]Node, error) {
	node := func(cs ...*Comparison) *Within {
		return &Within{Path: path, Comparisons: cs, array: array, rest: rest}
	}
	if jsonscan.KindAt(p.raw, v) != jsonscan.Object {
		c, err := p.withinComparison(path, leaf, Eq, v, p.ci)
		if err != nil {
			return nil, err
		}
		return []Node{node(c)}, nil
	}
	ops, ci, err := p.operators(path, v)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	var together []*Comparison // one value must satisfy them all
	for _, op := range ops {
		switch {
		case op.op != 0:
			c, err := p.withinComparison(path, leaf, op.op, op.at, ci)
			if err != nil {
				return nil, err
			}
			together = append(together, c)
		case op.name == "$ne":
			c, err := p.withinComparison(path, leaf, Eq, op.at, ci)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, &Not{Node: node(c)})
		case op.name == "$in":
			n, err := p.anyOf(path, op.at, func(v int) (Node, error) {
				c, err := p.withinComparison(path, leaf, Eq, v, ci)
				if err != nil {
					return nil, err
				}
				return node(c), nil
			})
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
		default:
			return nil, invalidf("%s does not apply to '%s', a field inside an array of objects or of arrays: compare its values ($eq, $gt, $gte, $lt, $lte, $in, $ne)", op.name, path)
		}
	}
	if len(together) > 0 {
		nodes = append(nodes, node(together...))
	}
	return nodes, nil
}

// withinComparison reads one value compared with the values at path.
func (p *parser) withinComparison(path string, leaf *schema.Field, op Op, at int, ci bool) (*Comparison, error) {
	if k := jsonscan.KindAt(p.raw, at); k == jsonscan.Array || k == jsonscan.Object {
		end, _ := jsonscan.End(p.raw, at)
		return nil, invalidf("%s: field '%s' lies inside an array, and a filter compares the values there one at a time, with %s, not with %s", errValueType, path, takes(leaf.Type), shown(p.raw[at:end]))
	}
	c, err := p.comparison(leaf, op, at, ci)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// holds reports whether some value reached from the outermost array val
// satisfies all of the comparisons.
func (w *Within) holds(val []byte) bool {
	return reach(val, w.rest, func(v []byte) bool {
		for _, c := range w.Comparisons {
			if !c.holds(v) {
				return false
			}
		}
		return true
	})
}

// reach calls fn with the values found by following the members rest from
// val, going into every element of each array on the way (and of arrays
// where the members end), until fn returns true; it reports whether one
// did. The depth is the document's, which its schema bounds.
func reach(val []byte, rest []string, fn func(v []byte) bool) bool {
	switch jsonscan.KindAt(val, 0) {
	case jsonscan.Array:
		found := false
		eachElement(val, func(elem []byte) bool {
			found = reach(elem, rest, fn)
			return !found
		})
		return found
	case jsonscan.Object:
		if len(rest) == 0 {
			return false
		}
		m, ok := member(val, rest[0])
		return ok && reach(m, rest[1:], fn)
	}
	return len(rest) == 0 && fn(val)
}

// member returns the value of the object obj's member name (the first, if
// it is given twice).
func member(obj []byte, name string) ([]byte, bool) {
	o, err := jsonscan.ObjectAt(obj, 0)
	if err != nil {
		return nil, false
	}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil || !ok {
			return nil, false
		}
		e, err := jsonscan.End(obj, v)
		if err != nil {
			return nil, false
		}
		if (!escaped && string(key) == name) || (escaped && jsonscan.Unquote(key) == name) {
			return obj[v:e], true
		}
		o.Resume(e)
	}
}
