// Package filter parses the filters of the Tigris v1 API into a tree that a
// query planner can read, and evaluates that tree against JSON documents.
//
// A filter is a JSON object (reference §9):
//
//	{"f": v}                               f equals v
//	{"f": {"$gt": v, "$lte": w}}           comparisons: $eq $gt $gte $lt $lte
//	{"f": {"$in": [v, w]}}                 and $ne, $exists, and on strings
//	                                       $contains, $not, $regex (operators.go)
//	{"f": {"$eq": "x", "collation": {"case": "ci"}}}
//	{"$and": [filter, filter, ...]}        at least two filters each
//	{"$or": [filter, filter, ...]}
//	{"a": 1, "b.c": 2}                     several members: all must hold
//	{}                                     every document
//
// Fields are named by dot paths into nested objects and must be scalar
// fields of the schema or arrays of scalars; each value is read with the
// field's schema type (an array's element type). On an array of scalars a
// value means "some element" ({"tags":"x"}: the array contains x; with
// operators, one element satisfies them all), and an array value means
// that exact array ({"tags":["a","b"]}). A path may also reach through
// arrays of objects or of arrays (within.go): {"arr_obj.name":"x"} holds
// when some object of arr_obj has name x.
//
// Errors a client can cause are *Error values with the exact message the API
// returns (see Error). The package knows nothing of HTTP or storage.
package filter

import (
	"github.com/foliodb/folio/internal/schema"
)

// FieldTypes resolves the dot path of a field to its schema definition.
// *schema.Schema satisfies it.
type FieldTypes interface {
	Field(path string) (*schema.Field, bool)
}

// Collation selects how strings compare. Case is "cs" (case-sensitive, the
// default, also when empty) or "ci" (case-insensitive). It has the JSON
// shape of the API's collation object, {"case":"ci"}.
type Collation struct {
	Case string `json:"case"`
}

// Op is a comparison operator.
type Op uint8

// The comparison operators.
const (
	Eq  Op = iota + 1 // $eq
	Gt                // $gt
	Gte               // $gte
	Lt                // $lt
	Lte               // $lte
)

var opNames = [...]string{Eq: "$eq", Gt: "$gt", Gte: "$gte", Lt: "$lt", Lte: "$lte"}

// String returns the operator as written in filters ("$eq", ...).
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "unknown"
}

// holds reports whether the operator holds for a comparison result
// (negative: the document's value is less than the filter's).
func (o Op) holds(cmp int) bool {
	switch o {
	case Eq:
		return cmp == 0
	case Gt:
		return cmp > 0
	case Gte:
		return cmp >= 0
	case Lt:
		return cmp < 0
	case Lte:
		return cmp <= 0
	}
	return false
}

// Node is one node of a filter tree: *And, *Or, *Comparison, *Elements,
// *ArrayEquals, *Within (within.go: fields inside arrays of objects or of
// arrays), *Time (times.go: the documents' times), or one of
// operators.go's: *Not, *Exists, *Like.
type Node interface {
	node()
}

// And holds when all of its nodes hold. It has at least two.
type And struct {
	Nodes []Node
}

// Or holds when any of its nodes holds. It has at least two.
type Or struct {
	Nodes []Node
}

// Comparison compares the value at Path in a document with Value.
//
// A document whose value at Path is missing or null does not match, whatever
// the operator.
type Comparison struct {
	// Path is the dot path of the field ("a.b.c").
	Path string
	// Type is the field's schema type, always a scalar type.
	Type schema.Type
	// Op is the operator.
	Op Op
	// Value is the filter's value, read with the field's type: int64 for
	// Int32 and Int64 fields, float64 for Number, string for String, UUID
	// and DateTime, the base64-decoded bytes ([]byte) for Bytes, and bool
	// for Bool. Strings are as written, not case-folded.
	Value any
	// CaseInsensitive is set on String fields compared under the "ci"
	// collation: both sides are then compared after index.Fold.
	CaseInsensitive bool

	slot   int    // index of Path among the filter's paths
	raw    []byte // Value as bytes, for string and byte comparisons
	folded string // index.Fold(Value), when CaseInsensitive
}

// Elements holds when some one element of the array at Path satisfies all
// of its comparisons: {"tags":"x"} (the array contains "x"), or
// {"tags":{"$gte":"a","$lt":"c"}} (some element is in [a, c)). The
// comparisons are on Path, of the array's element type, and a null
// element matches none of them. Index entries exist for each element, so
// the comparisons together are one index range.
type Elements struct {
	Path        string
	Comparisons []*Comparison

	slot int
}

// ArrayEquals holds when the array at Path has exactly the elements of
// Elements, in order: {"tags":["a","b"]}. Each of Elements is an $eq
// comparison on Path, of the array's element type; there are none for [].
type ArrayEquals struct {
	Path     string
	Elements []*Comparison

	slot int
}

func (*And) node()         {}
func (*Or) node()          {}
func (*Comparison) node()  {}
func (*Elements) node()    {}
func (*ArrayEquals) node() {}

// Filter is a parsed filter, built by Parse (Matches relies on what Parse
// prepares next to the tree). The zero Filter matches every document. A
// Filter is immutable and safe for concurrent use.
type Filter struct {
	// Root is the top of the tree; nil for the empty filter {}.
	Root Node

	paths pathTree // the paths Matches must extract; empty when Root is nil
	// regexes are the tree's $regex nodes, whose cost Matches checks.
	regexes []*Like
}

// MatchesAll reports whether the filter is empty ({}) and so matches every
// document without looking at it.
func (f Filter) MatchesAll() bool { return f.Root == nil }

// Comparisons returns every comparison of the tree, depth first, those
// of Elements and ArrayEquals nodes included (not those of Within nodes,
// whose values no index holds).
func (f Filter) Comparisons() []*Comparison {
	var out []*Comparison
	walk(f.Root, func(n Node) {
		switch n := n.(type) {
		case *Comparison:
			out = append(out, n)
		case *Elements:
			out = append(out, n.Comparisons...)
		case *ArrayEquals:
			out = append(out, n.Elements...)
		}
	})
	return out
}

// walk calls fn with every node of the tree under n, depth first.
func walk(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	fn(n)
	switch n := n.(type) {
	case *And:
		for _, c := range n.Nodes {
			walk(c, fn)
		}
	case *Or:
		for _, c := range n.Nodes {
			walk(c, fn)
		}
	case *Not:
		walk(n.Node, fn)
	}
}
