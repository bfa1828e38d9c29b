package filter

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// Parse parses the filter raw for a collection whose fields s describes.
// collation is the request-level collation; a "collation" given next to a
// field's operators overrides it for that field. Collations apply to String
// fields only.
//
// A missing (empty) or null filter gives "filter is a required field"; most
// callers check that themselves first. Every error is an *Error with code
// INVALID_ARGUMENT; among the messages:
//
//	querying on non schema field 'x'
//	unsupported value type               (1.5 for an integer, an object field...)
//	unsupported operator '$nin'
//	and filter needs minimum 2 filters   (or: or filter needs minimum 2 filters)
//	collation 'xx' is not supported
//	duplicate filter 'x'                 (the same member twice in one object)
//	filter has more than 1000 comparisons
//	filter nests $and and $or more than 32 deep
func Parse(raw []byte, s FieldTypes, collation Collation) (Filter, error) {
	ci, err := caseInsensitive(collation.Case)
	if err != nil {
		return Filter{}, err
	}
	start := jsonscan.SkipSpace(raw, 0)
	if start == len(raw) || jsonscan.KindAt(raw, start) == jsonscan.Null {
		return Filter{}, invalidf("filter is a required field")
	}
	if _, _, err := jsonscan.Whole(raw); err != nil {
		return Filter{}, invalidf("filter is not valid JSON: %v", err)
	}
	if jsonscan.KindAt(raw, start) != jsonscan.Object {
		return Filter{}, invalidf("filter must be a JSON object")
	}
	p := parser{raw: raw, fields: s, ci: ci}
	root, _, err := p.object(start, 0)
	if err != nil {
		return Filter{}, err
	}
	f := Filter{Root: root}
	if root != nil {
		f.paths = newPathTree(root)
		walk(root, func(n Node) {
			if l, ok := n.(*Like); ok && l.re != nil {
				f.regexes = append(f.regexes, l)
			}
		})
	}
	return f, nil
}

// caseInsensitive reads a collation's case.
func caseInsensitive(c string) (bool, error) {
	switch c {
	case "", "cs":
		return false, nil
	case "ci":
		return true, nil
	}
	return false, invalidf("collation '%s' is not supported", c)
}

// MaxComparisons bounds the comparisons of one filter. Parsing and
// planning cost little per comparison, but every candidate document is
// checked against all of them, and each comparison of an $or can be an
// index range the planner reads: at 1,000 a request on this bound stays far
// under a second (a filter of 100,000 took over a minute before there was
// one), and hand-written or generated filters need nowhere near as many.
const MaxComparisons = 1000

// MaxDepth bounds how deep $and and $or nest in one filter. Evaluation
// recurses once per level; 32 levels is more than any real query
// needs (a nesting of 4,990 took seconds to parse before there was one).
const MaxDepth = 32

type parser struct {
	raw         []byte
	fields      FieldTypes
	ci          bool // the request-level collation
	comparisons int  // read so far, against MaxComparisons
}

// object parses the filter object at raw[i], nested depth levels of $and
// and $or deep; it returns nil for {}, and where the object ends.
func (p *parser) object(i, depth int) (Node, int, error) {
	o, err := jsonscan.ObjectAt(p.raw, i)
	if err != nil {
		return nil, 0, invalidf("filter must be a JSON object")
	}
	var nodes []Node
	seen := names{}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return nil, 0, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		name := unquote(key, escaped)
		if !seen.add(name) {
			return nil, 0, invalidf("duplicate filter '%s'", name)
		}
		switch name {
		case "$and", "$or":
			n, end, err := p.logical(name, v, depth+1)
			if err != nil {
				return nil, 0, err
			}
			nodes = append(nodes, n)
			o.Resume(end)
			continue
		default:
			cs, err := p.field(name, v)
			if err != nil {
				return nil, 0, err
			}
			nodes = append(nodes, cs...)
		}
		if err := o.Skip(); err != nil {
			return nil, 0, invalidf("filter is not valid JSON: %v", err)
		}
	}
	switch len(nodes) {
	case 0:
		return nil, o.End(), nil
	case 1:
		return nodes[0], o.End(), nil
	}
	return &And{Nodes: nodes}, o.End(), nil
}

// names is a set of member names, a list while small: a filter object
// usually has a few, but a client may send many.
type names struct {
	list []string
	set  map[string]bool
}

// add adds name and reports whether it was new.
func (n *names) add(name string) bool {
	if n.set != nil {
		if n.set[name] {
			return false
		}
		n.set[name] = true
		return true
	}
	for _, s := range n.list {
		if s == name {
			return false
		}
	}
	n.list = append(n.list, name)
	if len(n.list) == 16 {
		n.set = make(map[string]bool, 32)
		for _, s := range n.list {
			n.set[s] = true
		}
	}
	return true
}

// logical parses the array of filters of $and or $or at raw[i], the
// depth-th level of them, and returns where the array ends.
func (p *parser) logical(op string, i, depth int) (Node, int, error) {
	word := strings.TrimPrefix(op, "$")
	if depth > MaxDepth {
		return nil, 0, invalidf("filter nests $and and $or more than %d deep", MaxDepth)
	}
	if jsonscan.KindAt(p.raw, i) != jsonscan.Array {
		return nil, 0, invalidf("%s filter needs an array of filters", word)
	}
	a, _ := jsonscan.ArrayAt(p.raw, i)
	var nodes []Node
	for {
		v, ok, err := a.Next()
		if err != nil {
			return nil, 0, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		if jsonscan.KindAt(p.raw, v) != jsonscan.Object {
			return nil, 0, invalidf("%s filter needs an array of filters", word)
		}
		// Each element parses its own object only once: skipping it again
		// would make a deep nesting cost its depth times its size.
		n, end, err := p.object(v, depth)
		if err != nil {
			return nil, 0, err
		}
		if n == nil {
			return nil, 0, invalidf("%s filter does not accept an empty filter", word)
		}
		nodes = append(nodes, n)
		a.Resume(end)
	}
	if len(nodes) < 2 {
		return nil, 0, invalidf("%s filter needs minimum 2 filters", word)
	}
	if op == "$and" {
		return &And{Nodes: nodes}, a.End(), nil
	}
	return &Or{Nodes: nodes}, a.End(), nil
}

// field parses the conditions on one field: a value (equality) or an object
// of operators, with an optional collation.
func (p *parser) field(path string, v int) ([]Node, error) {
	f, ok := p.fields.Field(path)
	if !ok || (f.Type == schema.Array && f.Items != nil && f.Items.Type == schema.Array) {
		if leaf, array, rest, ok := p.within(path); ok {
			return p.withinField(path, leaf, array, rest, v)
		}
	}
	if !ok && (path == CreatedAtField || path == UpdatedAtField) {
		return p.timeField(path, v)
	}
	if !ok {
		if strings.HasPrefix(path, "$") {
			return nil, invalidf("unsupported operator '%s'", path)
		}
		return nil, invalidf("querying on non schema field '%s'", path)
	}
	array := f.Type == schema.Array && f.Items != nil && f.Items.Type.Scalar()
	if !f.Type.Scalar() && !array {
		return nil, notComparable(f)
	}
	if jsonscan.KindAt(p.raw, v) != jsonscan.Object {
		n, err := p.operand(f, array, Eq, v, p.ci)
		if err != nil {
			return nil, err
		}
		return []Node{n}, nil
	}
	ops, ci, err := p.operators(path, v)
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(ops))
	var elements []*Comparison // an array's: one element must satisfy them all
	for _, op := range ops {
		if op.op != 0 && jsonscan.KindAt(p.raw, op.at) == jsonscan.Null {
			n, err := p.null(f, op.op)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
			continue
		}
		if op.op == 0 {
			n, err := p.special(f, array, op.name, op.at, ci)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
			continue
		}
		if array && jsonscan.KindAt(p.raw, op.at) != jsonscan.Array {
			c, err := p.comparison(f.Items, op.op, op.at, ci)
			if err != nil {
				return nil, err
			}
			elements = append(elements, c)
			continue
		}
		n, err := p.operand(f, array, op.op, op.at, ci)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if len(elements) > 0 {
		nodes = append(nodes, &Elements{Path: f.Path, Comparisons: elements})
	}
	return nodes, nil
}

// operand is an operator and where its value is in the filter: a
// comparison (op set) or one of the operators of operators.go (op 0).
type operand struct {
	name string
	op   Op
	at   int
}

// comparisonOps are the comparison operators by name.
var comparisonOps = map[string]Op{"$eq": Eq, "$gt": Gt, "$gte": Gte, "$lt": Lt, "$lte": Lte}

// specialOps are the operators of operators.go.
var specialOps = map[string]bool{"$ne": true, "$in": true, "$exists": true, "$not": true, "$contains": true, "$regex": true}

// operators reads the object of operators at raw[v] on the field path, and
// the collation that governs them (the request's unless one is given
// there). The collation may come after the operators, so it is read first.
func (p *parser) operators(path string, v int) ([]operand, bool, error) {
	var ops []operand
	ci := p.ci
	o, _ := jsonscan.ObjectAt(p.raw, v)
	for {
		key, escaped, at, ok, err := o.Next()
		if err != nil {
			return nil, false, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		name := unquote(key, escaped)
		op, comparison := comparisonOps[name]
		switch {
		case name == "collation":
			if ci, err = p.fieldCollation(at); err != nil {
				return nil, false, err
			}
		case comparison || specialOps[name]:
			for _, prev := range ops {
				if prev.name == name {
					return nil, false, invalidf("duplicate filter '%s'", name)
				}
			}
			ops = append(ops, operand{name, op, at})
		default:
			return nil, false, invalidf("unsupported operator '%s'", name)
		}
		if err := o.Skip(); err != nil {
			return nil, false, invalidf("filter is not valid JSON: %v", err)
		}
	}
	if len(ops) == 0 {
		return nil, false, invalidf("filter on field '%s' needs one of the operators %s", path, operatorList)
	}
	return ops, ci, nil
}

// operatorList names the operators a field's object takes, for errors.
const operatorList = "$eq, $gt, $gte, $lt, $lte, $ne, $in, $exists, $not, $contains, $regex"

// operand builds the node comparing field f by op with the value at
// raw[i]: a comparison, or on an array of scalars (array set) the
// equality of the whole array with an array value, or else the elements'
// comparison with a scalar one.
func (p *parser) operand(f *schema.Field, array bool, op Op, i int, ci bool) (Node, error) {
	if jsonscan.KindAt(p.raw, i) == jsonscan.Null {
		return p.null(f, op)
	}
	if !array {
		return p.comparison(f, op, i, ci)
	}
	if jsonscan.KindAt(p.raw, i) != jsonscan.Array {
		c, err := p.comparison(f.Items, op, i, ci)
		if err != nil {
			return nil, err
		}
		return &Elements{Path: f.Path, Comparisons: []*Comparison{c}}, nil
	}
	if op != Eq { // arrays are equal or not; they have no order
		end, _ := jsonscan.End(p.raw, i)
		return nil, invalidf("%s: array field '%s' compares with an array only by equality, not with %s", errValueType, f.Path, shown(p.raw[i:end]))
	}
	eq := &ArrayEquals{Path: f.Path}
	a, _ := jsonscan.ArrayAt(p.raw, i)
	for {
		v, ok, err := a.Next()
		if err != nil {
			return nil, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			return eq, nil
		}
		c, err := p.comparison(f.Items, Eq, v, ci)
		if err != nil {
			return nil, err
		}
		eq.Elements = append(eq.Elements, c)
		e, _ := jsonscan.End(p.raw, v)
		a.Resume(e)
	}
}

// fieldCollation reads a per-field collation object at raw[i].
func (p *parser) fieldCollation(i int) (bool, error) {
	end, _ := jsonscan.End(p.raw, i)
	if jsonscan.KindAt(p.raw, i) != jsonscan.Object {
		return false, invalidf("collation '%s' is not supported", p.raw[i:end])
	}
	o, _ := jsonscan.ObjectAt(p.raw, i)
	c := ""
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return false, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		if unquote(key, escaped) == "case" {
			e, _ := jsonscan.End(p.raw, v)
			if jsonscan.KindAt(p.raw, v) != jsonscan.String {
				return false, invalidf("collation '%s' is not supported", p.raw[v:e])
			}
			c = unquote(p.raw[v+1:e-1], true)
		}
		if err := o.Skip(); err != nil {
			return false, invalidf("filter is not valid JSON: %v", err)
		}
	}
	return caseInsensitive(c)
}

// comparison builds the comparison of field f with the value at raw[i].
// Like the original server, it reads the value's text (a string's contents,
// a number or boolean as written) with the field's type, so {"n":"5"}
// compares integer field n with 5, and 1.5 is not an integer.
func (p *parser) comparison(f *schema.Field, op Op, i int, ci bool) (*Comparison, error) {
	end, _ := jsonscan.End(p.raw, i)
	var text string
	switch jsonscan.KindAt(p.raw, i) {
	case jsonscan.String:
		text = unquote(p.raw[i+1:end-1], true)
	case jsonscan.Number, jsonscan.Bool:
		text = string(p.raw[i:end])
	default: // null, arrays and objects compare with nothing
		return nil, p.valueTypeError(f, p.raw[i:end])
	}
	if err := p.count(); err != nil {
		return nil, err
	}
	c := &Comparison{Path: f.Path, Type: f.Type, Op: op}
	switch f.Type {
	case schema.Int32, schema.Int64:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, p.valueTypeError(f, p.raw[i:end])
		}
		c.Value = n
	case schema.Number:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, p.valueTypeError(f, p.raw[i:end])
		}
		c.Value = x
	case schema.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, p.valueTypeError(f, p.raw[i:end])
		}
		c.Value = b
	case schema.String, schema.UUID, schema.DateTime:
		c.Value = text
		c.raw = []byte(text)
		if ci && f.Type == schema.String {
			c.CaseInsensitive = true
			c.folded = index.Fold(text)
		}
	case schema.Bytes:
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, p.valueTypeError(f, p.raw[i:end])
		}
		c.Value = b
		c.raw = b
	default:
		return nil, notComparable(f)
	}
	return c, nil
}

// valueTypeError is valueTypeError for a comparison with field f, which
// may be the items of an array field.
func (p *parser) valueTypeError(f *schema.Field, value []byte) *Error {
	outer, ok := p.fields.Field(f.Path)
	return valueTypeError(f, ok && outer != f && outer.Type == schema.Array, value)
}

func unquote(s []byte, escaped bool) string {
	if escaped {
		return jsonscan.Unquote(s)
	}
	return string(s)
}
