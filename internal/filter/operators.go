package filter

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// The operators beyond the comparisons: those of the final Tigris API
// ($not, $contains, $regex, on strings) and those users of other document
// databases reach for first ($ne, $in, $exists). $in is an $or of
// equalities, which the planner serves from the indexes; the others are
// checked on each candidate document.

// Not holds when Node does not: {"f":{"$ne":v}} is Not{f $eq v}, so a
// document without f, or with null there, matches it (as in MongoDB).
type Not struct {
	Node Node
}

// Exists holds when the value at Path is present and not null (Want
// true), or missing or null (Want false): {"f":{"$exists":true}}.
type Exists struct {
	Path string
	Want bool
	// Null is set when the filter compared the field with null rather
	// than said $exists (see parser.null); it changes only how the
	// operator is named.
	Null bool

	slot int
}

// LikeOp is the operator of a Like node.
type LikeOp uint8

// The Like operators, as the original server defined them: $contains and
// $not take a substring, $regex a regular expression.
const (
	Contains    LikeOp = iota + 1 // the string holds the substring
	NotContains                   // $not: the string does not hold it
	Regex                         // some part of the string matches
)

// Like matches the string at Path (or, on an array of strings, its
// elements: $contains and $regex hold when one element does, $not when no
// element holds the substring) against a substring or a regular
// expression. A document whose value at Path is missing or null matches
// none of them, $not included, as in the original.
type Like struct {
	Path string
	Op   LikeOp
	// Pattern is the substring or the expression as written.
	Pattern string
	// CaseInsensitive: under the "ci" collation both sides are folded
	// (index.Fold), or the expression matches without regard to case.
	CaseInsensitive bool

	slot    int
	folded  []byte         // the substring to look for, folded if CaseInsensitive
	re      *regexp.Regexp // Op Regex
	insts   int            // the size of re's program, for MaxRegexWork
	onArray bool           // the field is an array of strings
}

var likeNames = [...]string{Contains: "$contains", NotContains: "$not", Regex: "$regex"}

// String returns the operator as written in filters.
func (o LikeOp) String() string {
	if int(o) < len(likeNames) && likeNames[o] != "" {
		return likeNames[o]
	}
	return "unknown"
}

// DocumentOnly returns the first operator of the filter that only a
// document can answer, not an index: $ne, $exists, $not, $contains or
// $regex, or the name of a document's time it compares
// (_tigris_created_at); "" if there is none. The search index, which must count and
// facet what a filter selects, takes no such operator.
func (f Filter) DocumentOnly() string {
	op := ""
	walk(f.Root, func(n Node) {
		if op != "" {
			return
		}
		switch n := n.(type) {
		case *Not:
			op = "$ne"
		case *Exists:
			op = "$exists"
			if n.Null {
				op = "a comparison with null"
			}
		case *Like:
			op = n.Op.String()
		case *Time:
			op = n.Path
		}
	})
	return op
}

func (*Not) node()    {}
func (*Exists) node() {}
func (*Like) node()   {}

// Bounds on a $regex. Go's regular expressions (RE2) take time linear in
// the text, but times the size of the compiled expression in the worst
// case (a{0,100}b over a megabyte of a's took 5.5 s on the project's
// machine), and one match cannot be interrupted. So the expression is
// bounded when the filter is parsed, and the text times the expression
// before each match (MaxRegexWork: about a fifth of a second at worst
// there); a value past it fails the request with a 400 rather than hold a
// core.
const (
	MaxRegexBytes        = 1024
	MaxRegexInstructions = 256
	MaxRegexWork         = 1 << 23
)

// special parses one of the operators beyond the comparisons, name, whose
// value is at raw[at], on field f (array: an array of scalars).
func (p *parser) special(f *schema.Field, array bool, name string, at int, ci bool) (Node, error) {
	switch name {
	case "$ne":
		n, err := p.operand(f, array, Eq, at, ci)
		if err != nil {
			return nil, err
		}
		return &Not{Node: n}, nil
	case "$in":
		return p.in(f, array, at, ci)
	case "$exists":
		if err := p.count(); err != nil {
			return nil, err
		}
		k := jsonscan.KindAt(p.raw, at)
		if k != jsonscan.Bool {
			return nil, invalidf("$exists on field '%s' takes true or false", f.Path)
		}
		return &Exists{Path: f.Path, Want: p.raw[at] == 't'}, nil
	case "$not", "$contains", "$regex":
		return p.like(f, array, name, at, ci)
	}
	return nil, invalidf("unsupported operator '%s'", name)
}

// in parses {"f":{"$in":[v, w, ...]}}: f equals one of the values (on an
// array field, one element does, or the array equals an array value).
func (p *parser) in(f *schema.Field, array bool, at int, ci bool) (Node, error) {
	return p.anyOf(f.Path, at, func(v int) (Node, error) { return p.operand(f, array, Eq, v, ci) })
}

// anyOf parses the values of $in on path, the array at raw[at], each
// into the node alt makes of it, and returns the node that holds when one
// of them does.
func (p *parser) anyOf(path string, at int, alt func(v int) (Node, error)) (Node, error) {
	if jsonscan.KindAt(p.raw, at) != jsonscan.Array {
		return nil, invalidf("$in on field '%s' takes an array of values", path)
	}
	a, _ := jsonscan.ArrayAt(p.raw, at)
	var nodes []Node
	for {
		v, ok, err := a.Next()
		if err != nil {
			return nil, invalidf("filter is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		n, err := alt(v)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
		e, _ := jsonscan.End(p.raw, v)
		a.Resume(e)
	}
	switch len(nodes) {
	case 0:
		return nil, invalidf("$in on field '%s' needs at least one value", path)
	case 1:
		return nodes[0], nil
	}
	return &Or{Nodes: nodes}, nil
}

// like parses $not, $contains and $regex, which take a string and apply to
// string fields and arrays of strings.
func (p *parser) like(f *schema.Field, array bool, name string, at int, ci bool) (Node, error) {
	if err := p.count(); err != nil {
		return nil, err
	}
	elem := f
	if array {
		elem = f.Items
	}
	if elem.Type != schema.String {
		return nil, invalidf("%s applies to string fields, and '%s' is not one", name, f.Path)
	}
	if jsonscan.KindAt(p.raw, at) != jsonscan.String {
		return nil, invalidf("%s on field '%s' takes a string", name, f.Path)
	}
	end, _ := jsonscan.End(p.raw, at)
	pattern := unquote(p.raw[at+1:end-1], true)
	l := &Like{Path: f.Path, Pattern: pattern, CaseInsensitive: ci, onArray: array}
	switch name {
	case "$contains":
		l.Op = Contains
	case "$not":
		l.Op = NotContains
	case "$regex":
		l.Op = Regex
		re, insts, err := compileRegex(pattern, ci)
		if err != nil {
			return nil, err
		}
		l.re, l.insts = re, insts
		return l, nil
	}
	if ci {
		l.folded = []byte(index.Fold(pattern))
	} else {
		l.folded = []byte(pattern)
	}
	return l, nil
}

// compileRegex compiles a $regex within its bounds, and returns the size
// of its program.
func compileRegex(pattern string, ci bool) (*regexp.Regexp, int, error) {
	if len(pattern) > MaxRegexBytes {
		return nil, 0, invalidf("$regex is longer than %d bytes", MaxRegexBytes)
	}
	flags := syntax.Perl
	if ci {
		flags |= syntax.FoldCase
	}
	parsed, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, 0, invalidf("$regex is not a valid regular expression: %v", err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, invalidf("$regex is not a valid regular expression: %v", err)
	}
	if len(prog.Inst) > MaxRegexInstructions {
		return nil, 0, invalidf("$regex is too costly: it compiles to %d instructions, more than %d (use fewer or smaller repetitions)", len(prog.Inst), MaxRegexInstructions)
	}
	if ci {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, 0, invalidf("$regex is not a valid regular expression: %v", err)
	}
	return re, len(prog.Inst), nil
}

// regexCost refuses a document whose value at a $regex's path would take
// the match past MaxRegexWork. It is checked on the whole value (an
// array's every element together) before any match, so that no match is
// started that could hold a core for seconds.
func (f Filter) regexCost(spans []span) error {
	for _, l := range f.regexes {
		sp := spans[l.slot]
		if sp.start < 0 {
			continue
		}
		if n := sp.end - sp.start; n*l.insts > MaxRegexWork {
			return invalidf("$regex on '%s' is too costly for a value of %d bytes: this expression matches values of at most %d bytes (a simpler one, longer values)", l.Path, n, MaxRegexWork/l.insts)
		}
	}
	return nil
}

// count counts one more comparison against MaxComparisons.
func (p *parser) count() error {
	p.comparisons++
	if p.comparisons > MaxComparisons {
		return invalidf("filter has more than %d comparisons", MaxComparisons)
	}
	return nil
}

// holds reports whether the Exists holds for the value span (start < 0:
// missing).
func (e *Exists) holds(doc []byte, sp span) bool {
	present := sp.start >= 0 && jsonscan.KindAt(doc, sp.start) != jsonscan.Null
	return present == e.Want
}

// holds reports whether the Like holds for the JSON value val.
func (l *Like) holds(val []byte) bool {
	if !l.onArray {
		found, ok := l.matchString(val)
		if !ok {
			return false
		}
		return found != (l.Op == NotContains)
	}
	if jsonscan.KindAt(val, 0) != jsonscan.Array {
		return false
	}
	found := false
	eachElement(val, func(elem []byte) bool {
		f, ok := l.matchString(elem)
		found = ok && f
		return !found
	})
	return found != (l.Op == NotContains)
}

// matchString reports whether the JSON string val holds the substring or
// matches the expression; ok is false when val is not a string.
func (l *Like) matchString(val []byte) (found, ok bool) {
	if jsonscan.KindAt(val, 0) != jsonscan.String {
		return false, false
	}
	s := val[1 : len(val)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		s = jsonscan.AppendUnquote(nil, s)
	}
	if l.re != nil {
		return l.re.Match(s), true
	}
	if l.CaseInsensitive {
		return strings.Contains(index.Fold(string(s)), string(l.folded)), true
	}
	return bytes.Contains(s, l.folded), true
}

// null builds the node comparing field f by op with null. Null sorts
// before every other value, as in the original, and a missing field counts
// as null: index entries hold neither (index.Entries), so no filter can
// tell them apart. The comparisons are then questions of presence:
//
//	$eq null, $lte null    the field is missing or null  ($exists false)
//	$gt null, $ne null     it holds a value              ($exists true)
//	$gte null              every document
//	$lt null               no document
//
// On an array field the value compared is the array itself: null elements
// inside an array are not looked at.
func (p *parser) null(f *schema.Field, op Op) (Node, error) {
	if err := p.count(); err != nil {
		return nil, err
	}
	present := &Exists{Path: f.Path, Want: true, Null: true}
	absent := &Exists{Path: f.Path, Want: false, Null: true}
	switch op {
	case Eq, Lte:
		return absent, nil
	case Gt:
		return present, nil
	case Gte:
		return &Or{Nodes: []Node{present, absent}}, nil
	}
	return &And{Nodes: []Node{present, absent}}, nil // Lt
}
