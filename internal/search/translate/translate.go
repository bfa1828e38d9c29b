// Package translate checks a search request against its collection's
// schema and translates it into the engine's Plan: the text into term and
// phrase queries over the search fields, the filter into conjunctions and
// disjunctions of terms and number ranges, the sort and the facets into
// the fields that hold them. Every error is an INVALID_ARGUMENT naming
// what is wrong.
package translate

import (
	"encoding/hex"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

// Request is a search, checked against the collection's schema by
// Prepare.
type Request struct {
	// Q is the text: words and "quoted phrases", all of which a document
	// must hold (each in any of the search fields); empty matches all.
	Q string
	// SearchFields are the string fields Q is searched in; none: every
	// string field.
	SearchFields []string
	Filter       filter.Filter
	// Facets maps a field to the number of its most frequent values to
	// count.
	Facets map[string]int
	Sort   []SortField
	// GroupBy, if set, groups the hits by the values of fields.
	GroupBy *GroupBy
}

// GroupBy is a request's group_by: {"fields":["city"],"limit":3}.
type GroupBy struct {
	Fields []string
	// Limit is the most hits a group shows; 0: DefaultGroupHits.
	Limit int
}

// Bounds of group_by. A group shows 3 hits unless asked, at most 99, as
// the original's search engine (Typesense's group_limit); the fields are
// few, each a term column the search holds.
const (
	MaxGroupFields   = 3
	DefaultGroupHits = 3
	MaxGroupHits     = 99
)

// SortField is one sort key.
type SortField struct {
	Path string
	Desc bool
}

// MaxSortFields is how many sort keys a search may give, as in the
// original.
const MaxSortFields = 2

// DefaultFacetSize is a facet's size when the request gives none.
const DefaultFacetSize = 10

// Bounds of q. A search builds one term searcher for each word of q in
// each field searched, all held until it ends: a 25 KB q over 200 fields
// built 800,000 of them and took over 2 GB. MaxQueryTerms is Lucene's
// default bound on a query's clauses.
const (
	MaxQueryBytes = 4096
	// MaxQueryTerms bounds the words of q (each word of a phrase, stop
	// words not) times the fields searched.
	MaxQueryTerms = 1024
)

// Prepare checks a request against the schema (every error an
// INVALID_ARGUMENT naming what is wrong) and translates it into a plan.
func Prepare(s *schema.Schema, req Request) (*engine.Plan, error) {
	p := &engine.Plan{}
	searched, err := searchFields(s, req.SearchFields)
	if err != nil {
		return nil, err
	}
	if p.Text, err = textQuery(req.Q, searched); err != nil {
		return nil, err
	}
	for path, size := range req.Facets {
		f, ok := s.Field(path)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "facet field '%s' is not in the collection's schema", path)
		}
		if !facetable(f.Type) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "facet field '%s' is of type %s: facets are counted on string, integer and number fields", path, f.Type)
		}
		if size < 0 {
			return nil, apierror.Errorf(apierror.InvalidArgument, "size of facet '%s' must not be negative", path)
		}
		if size == 0 {
			size = DefaultFacetSize
		}
		p.Facets = append(p.Facets, engine.Facet{Path: path, Size: size, Numeric: numeric(f.Type)})
	}
	if len(req.Sort) > MaxSortFields {
		return nil, apierror.Errorf(apierror.InvalidArgument, "sort takes at most %d fields, got %d", MaxSortFields, len(req.Sort))
	}
	for _, sf := range req.Sort {
		f, ok := s.Field(sf.Path)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "sort field '%s' is not in the collection's schema", sf.Path)
		}
		key, ok := sortKey(f, sf.Desc)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "sort field '%s' is of type %s: sorts are on integer, number, date-time, bool and string fields", sf.Path, f.Type)
		}
		p.Sort = append(p.Sort, key)
	}
	if p.Group, err = groupBy(s, req.GroupBy); err != nil {
		return nil, err
	}
	_, noText := p.Text.(*query.MatchAllQuery)
	p.Score = "none"
	if len(p.Sort) == 0 && !noText {
		p.Sort = append(p.Sort, &bsearch.SortScore{Desc: true})
		p.Score = ""
	}
	// The storage key last: pages are stable under equal scores, and
	// without text or sort the hits come in key order.
	p.Sort = append(p.Sort, &bsearch.SortDocID{})
	p.Query = p.Text
	if !req.Filter.MatchesAll() {
		fq := engine.NewFilter(translate(req.Filter.Root, func(path string) bool { return !multiValued(s, path) }))
		switch {
		case noText:
			p.Query = fq
		case p.Score == "none":
			p.Query = bleve.NewConjunctionQuery(p.Text, fq)
		default:
			// Ranked: the filter selects and the text alone scores.
			bq := bleve.NewBooleanQuery()
			bq.AddMust(p.Text)
			bq.AddFilter(fq)
			p.Query = bq
		}
	}
	return p, nil
}

// groupBy checks a group_by against the schema: the fields a facet takes,
// and arrays of them (grouped by their set of values), each once.
func groupBy(s *schema.Schema, g *GroupBy) (*engine.Group, error) {
	if g == nil {
		return nil, nil
	}
	if len(g.Fields) == 0 {
		return nil, apierror.Errorf(apierror.InvalidArgument, "group_by needs at least one field in 'fields'")
	}
	if len(g.Fields) > MaxGroupFields {
		return nil, apierror.Errorf(apierror.InvalidArgument, "group_by takes at most %d fields, got %d", MaxGroupFields, len(g.Fields))
	}
	if g.Limit < 0 || g.Limit > MaxGroupHits {
		return nil, apierror.Errorf(apierror.InvalidArgument, "group_by limit %d is out of range: a group shows 1 to %d hits", g.Limit, MaxGroupHits)
	}
	out := &engine.Group{Hits: g.Limit}
	if out.Hits == 0 {
		out.Hits = DefaultGroupHits
	}
	for _, path := range g.Fields {
		f, ok := s.Field(path)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "group_by field '%s' is not in the collection's schema", path)
		}
		t := f.Type
		if t == schema.Array && f.Items != nil && !f.Vector {
			t = f.Items.Type
		}
		if !facetable(t) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "group_by field '%s' is of type %s: hits are grouped by string, integer and number fields, and arrays of them", path, describeType(f))
		}
		if slices.Contains(out.Paths, path) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "group_by field '%s' is given twice", path)
		}
		out.Paths = append(out.Paths, path)
	}
	return out, nil
}

// describeType names a field's type in an error: an array by its items.
func describeType(f *schema.Field) string {
	switch {
	case f.Vector:
		return "vector"
	case f.Type == schema.Array && f.Items != nil:
		return "array of " + f.Items.Type.String()
	}
	return f.Type.String()
}

func facetable(t schema.Type) bool {
	return t == schema.String || t == schema.Int32 || t == schema.Int64 || t == schema.Number
}

func numeric(t schema.Type) bool {
	return t == schema.Int32 || t == schema.Int64 || t == schema.Number
}

// searchFields resolves the fields q is searched in: string fields at any
// depth, arrays of strings, and string fields of objects inside arrays
// (named by their dot path, as they are indexed).
func searchFields(s *schema.Schema, names []string) ([]string, error) {
	var all []string
	var walk func(fields []*schema.Field)
	walk = func(fields []*schema.Field) {
		for _, f := range fields {
			switch {
			case f.Type == schema.String:
				all = append(all, f.Path)
			case f.Type == schema.Array && f.Items != nil && f.Items.Type == schema.String:
				all = append(all, f.Path)
			case f.Type == schema.Array && f.Items != nil:
				walk(f.Items.Properties)
			case f.Type == schema.Object:
				walk(f.Properties)
			}
		}
	}
	walk(s.Fields())
	if len(names) == 0 {
		return all, nil
	}
	// A field given twice is searched once: twice, it doubled the work and
	// the field's weight in the ranking.
	var out []string
	for _, n := range names {
		if slices.Contains(out, n) {
			continue
		}
		if slices.Contains(all, n) {
			out = append(out, n)
			continue
		}
		f, ok := s.Field(n)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "search field '%s' is not in the collection's schema", n)
		}
		return nil, apierror.Errorf(apierror.InvalidArgument, "search field '%s' is of type %s: text is searched in string fields only", n, f.Type)
	}
	return out, nil
}

// textQuery is q over the fields searched: every word and phrase of q
// must match, each in any of them. Words the analyzer drops (stop words) are left
// out; a q of only such words matches nothing.
func textQuery(q string, searched []string) (query.Query, error) {
	if len(q) > MaxQueryBytes {
		return nil, apierror.Errorf(apierror.InvalidArgument, "q is %d bytes, above the limit of %d", len(q), MaxQueryBytes)
	}
	parts, err := splitQuery(q)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return bleve.NewMatchAllQuery(), nil
	}
	shared, err := fields.SharedAnalyzers()
	if err != nil {
		return nil, err
	}
	an := shared.Text
	// Each word is a term searcher per field: counted before any is built.
	words, kept := 0, parts[:0]
	for _, part := range parts {
		if n := len(an.Analyze([]byte(part.text))); n > 0 {
			words += n
			kept = append(kept, part)
		}
	}
	if words*len(searched) > MaxQueryTerms {
		return nil, apierror.Errorf(apierror.InvalidArgument, "q's words times its search fields are %d (%d × %d), above the limit of %d: give fewer words or search_fields",
			words*len(searched), words, len(searched), MaxQueryTerms)
	}
	if len(kept) == 0 || len(searched) == 0 {
		return bleve.NewMatchNoneQuery(), nil
	}
	all := make([]query.Query, len(kept))
	for i, part := range kept {
		anyField := make([]query.Query, len(searched))
		for j, f := range searched {
			if part.phrase {
				anyField[j] = engine.Deadline(engine.NewPhraseQuery(part.text, f, an))
			} else {
				mq := bleve.NewMatchQuery(part.text)
				mq.SetField(f)
				mq.Analyzer = "standard"
				anyField[j] = engine.Deadline(mq)
			}
		}
		all[i] = bleve.NewDisjunctionQuery(anyField...)
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return bleve.NewConjunctionQuery(all...), nil
}

type queryPart struct {
	text   string
	phrase bool
}

// splitQuery splits q into words and "quoted phrases". q of "*" is empty
// (the original's spelling of match-all).
func splitQuery(q string) ([]queryPart, error) {
	if strings.TrimSpace(q) == "*" {
		return nil, nil
	}
	var out []queryPart
	for {
		q = strings.TrimSpace(q)
		if q == "" {
			return out, nil
		}
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				return nil, apierror.Errorf(apierror.InvalidArgument, "q has a phrase without its closing quote")
			}
			if phrase := strings.TrimSpace(q[1 : 1+end]); phrase != "" {
				out = append(out, queryPart{text: phrase, phrase: true})
			}
			q = q[2+end:]
			continue
		}
		end := strings.IndexAny(q, " \t\n\"")
		if end < 0 {
			end = len(q)
		}
		out = append(out, queryPart{text: q[:end]})
		q = q[end:]
	}
}

// sortKey is the Bleve sort of a field; strings sort bytewise on their
// keyword shadow. A missing value sorts last either way.
func sortKey(f *schema.Field, desc bool) (*bsearch.SortField, bool) {
	key := &bsearch.SortField{Field: f.Path, Desc: desc, Missing: bsearch.SortFieldMissingLast}
	switch f.Type {
	case schema.Int32, schema.Int64, schema.Number:
		key.Field, key.Type = fields.Number(f.Path), bsearch.SortFieldAsString
	case schema.DateTime:
		key.Type = bsearch.SortFieldAsDate
	case schema.Bool:
		key.Type = bsearch.SortFieldAsString
	case schema.String:
		key.Field, key.Type = fields.Keyword(f.Path), bsearch.SortFieldAsString
	default:
		return nil, false
	}
	return key, true
}

// translate turns a filter tree into a Bleve query that matches the same
// documents, with two approximations the caller corrects by checking each
// hit's document with the filter: Elements asks that each of its
// comparisons hold for some element, not one element for all (Bleve
// cannot tie terms of a multi-valued field to one element; Within the
// same), and
// ArrayEquals that the array hold each element, not exactly them in order.
// Numbers are float64 in Bleve, so integers beyond 2^53 compare rounded.
func translate(n filter.Node, single func(path string) bool) query.Query {
	switch n := n.(type) {
	case *filter.And:
		qs := make([]query.Query, len(n.Nodes))
		for i, c := range n.Nodes {
			qs[i] = translate(c, single)
		}
		return bleve.NewConjunctionQuery(mergeRanges(qs, single)...)
	case *filter.Or:
		qs := make([]query.Query, len(n.Nodes))
		for i, c := range n.Nodes {
			qs[i] = translate(c, single)
		}
		return bleve.NewDisjunctionQuery(qs...)
	case *filter.Comparison:
		return comparison(n)
	case *filter.Elements:
		qs := make([]query.Query, len(n.Comparisons))
		for i, c := range n.Comparisons {
			qs[i] = comparison(c)
		}
		// One element satisfies them all: for numbers, one range.
		qs = mergeRanges(qs, func(string) bool { return true })
		if len(qs) == 1 {
			return qs[0]
		}
		return bleve.NewConjunctionQuery(qs...)
	case *filter.Within:
		// The values inside arrays of objects and of arrays are indexed
		// under the field's path, as an array's elements are: the same
		// approximation as Elements.
		qs := make([]query.Query, len(n.Comparisons))
		for i, c := range n.Comparisons {
			qs[i] = comparison(c)
		}
		if len(qs) == 1 {
			return qs[0]
		}
		return bleve.NewConjunctionQuery(qs...)
	case *filter.ArrayEquals:
		if len(n.Elements) == 0 {
			return bleve.NewMatchAllQuery()
		}
		qs := make([]query.Query, len(n.Elements))
		for i, c := range n.Elements {
			qs[i] = comparison(c)
		}
		return bleve.NewConjunctionQuery(qs...)
	}
	return bleve.NewMatchNoneQuery()
}

// mergeRanges makes the number ranges among the conjuncts qs that are on
// the same path one range, their intersection, where merge says a path's
// ranges may be merged: on a field with one value a document, x >= a and
// x < b is a <= x < b; on an array it is not (two elements may satisfy
// one each). A range costs its documents' bitmap: two halves of the
// index cost far more than their intersection.
func mergeRanges(qs []query.Query, merge func(path string) bool) []query.Query {
	var out []query.Query
	byPath := map[string]int{} // where a path's range is in out
	for _, q := range qs {
		r, ok := q.(*engine.NumberRange)
		if !ok || !merge(r.Path()) {
			out = append(out, q)
			continue
		}
		if at, ok := byPath[r.Path()]; ok {
			lo, hi := r.Bounds()
			plo, phi := out[at].(*engine.NumberRange).Bounds()
			out[at] = engine.NewNumberRange(r.Path(), max(plo, lo), min(phi, hi))
			continue
		}
		byPath[r.Path()] = len(out)
		out = append(out, r)
	}
	for i, q := range out {
		if r, ok := q.(*engine.NumberRange); ok {
			if lo, hi := r.Bounds(); lo > hi {
				out[i] = bleve.NewMatchNoneQuery()
			}
		}
	}
	return out
}

// multiValued tells whether path may hold several values in a document:
// it is an array, or inside one.
func multiValued(s *schema.Schema, path string) bool {
	for i := range len(path) + 1 {
		if i < len(path) && path[i] != '.' {
			continue
		}
		if f, ok := s.Field(path[:i]); ok && f.Type == schema.Array {
			return true
		}
	}
	return false
}

func comparison(c *filter.Comparison) query.Query {
	switch c.Type {
	case schema.String:
		if c.CaseInsensitive {
			return termOp(fields.Folded(c.Path), c.Op, index.Fold(c.Value.(string)))
		}
		return termOp(fields.Keyword(c.Path), c.Op, c.Value.(string))
	case schema.UUID, schema.DateTime:
		return termOp(fields.Keyword(c.Path), c.Op, c.Value.(string))
	case schema.Bytes:
		return termOp(fields.Keyword(c.Path), c.Op, hex.EncodeToString(c.Value.([]byte)))
	case schema.Int32, schema.Int64:
		// From 2^53 on, an integer and its neighbours share a float64, so a
		// strict bound widens to an inclusive one (x > v only implies
		// float(x) >= float(v)); the documents' own check narrows back.
		v, op := c.Value.(int64), c.Op
		if v >= 1<<53 || v <= -(1<<53) {
			switch op {
			case filter.Gt:
				op = filter.Gte
			case filter.Lt:
				op = filter.Lte
			}
		}
		return numberOp(c.Path, op, float64(v))
	case schema.Number:
		return numberOp(c.Path, c.Op, c.Value.(float64))
	case schema.Bool:
		want := c.Value.(bool)
		var qs []query.Query
		for _, b := range []bool{false, true} {
			cmp := 0
			if b != want {
				if b {
					cmp = 1
				} else {
					cmp = -1
				}
			}
			if holds(c.Op, cmp) {
				q := bleve.NewBoolFieldQuery(b)
				q.SetField(c.Path)
				qs = append(qs, q)
			}
		}
		switch len(qs) {
		case 0:
			return bleve.NewMatchNoneQuery()
		case 1:
			return qs[0]
		}
		return bleve.NewDisjunctionQuery(qs...)
	}
	return bleve.NewMatchNoneQuery()
}

func holds(op filter.Op, cmp int) bool {
	switch op {
	case filter.Eq:
		return cmp == 0
	case filter.Gt:
		return cmp > 0
	case filter.Gte:
		return cmp >= 0
	case filter.Lt:
		return cmp < 0
	case filter.Lte:
		return cmp <= 0
	}
	return false
}

func termOp(field string, op filter.Op, v string) query.Query {
	// A value at the terms' length limit compares by its cut form, and a
	// strict bound widens to an inclusive one: s > v only implies
	// cut(s) >= cut(v). The documents' own check narrows the hits back.
	v, loose := fields.CutTerm(v)
	if loose {
		switch op {
		case filter.Gt:
			op = filter.Gte
		case filter.Lt:
			op = filter.Lte
		}
	}
	t, f := true, false
	var q *query.TermRangeQuery
	switch op {
	case filter.Eq:
		tq := bleve.NewTermQuery(v)
		tq.SetField(field)
		return tq
	case filter.Gt:
		q = bleve.NewTermRangeInclusiveQuery(v, "", &f, nil)
	case filter.Gte:
		if v == "" { // Bleve reads an empty bound as none: every value is >= ""
			q = bleve.NewTermRangeInclusiveQuery("", "", nil, nil)
		} else {
			q = bleve.NewTermRangeInclusiveQuery(v, "", &t, nil)
		}
	case filter.Lt:
		if v == "" {
			return bleve.NewMatchNoneQuery()
		}
		q = bleve.NewTermRangeInclusiveQuery("", v, nil, &f)
	case filter.Lte:
		if v == "" {
			tq := bleve.NewTermQuery("")
			tq.SetField(field)
			return tq
		}
		q = bleve.NewTermRangeInclusiveQuery("", v, nil, &t)
	default:
		return bleve.NewMatchNoneQuery()
	}
	q.SetField(field)
	return q
}

// numberOp is a comparison with a number: a range of keys, read from
// the engine's number columns, or else from the terms of the field's
// $num. shadow.
func numberOp(field string, op filter.Op, v float64) query.Query {
	k := fields.NumberKey(v)
	lo, hi := uint64(0), uint64(math.MaxUint64)
	switch op {
	case filter.Eq:
		lo, hi = k, k
	case filter.Gt:
		if k == math.MaxUint64 {
			return bleve.NewMatchNoneQuery()
		}
		lo = k + 1
	case filter.Gte:
		lo = k
	case filter.Lt:
		if k == 0 {
			return bleve.NewMatchNoneQuery()
		}
		hi = k - 1
	case filter.Lte:
		hi = k
	default:
		return bleve.NewMatchNoneQuery()
	}
	return engine.NewNumberRange(field, lo, hi)
}
