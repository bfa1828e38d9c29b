package main

import (
	"context"
	"fmt"
	"strings"
)

// pageSize is the hits every query asks for.
const pageSize = 20

// facetSize is how many values each facet counts.
const facetSize = 10

// query is one search, as every engine runs it: its words (all of which
// a hit holds, in its title or body) or its phrase, ranked by relevance
// (BM25 or the engine's own) unless sorted by size, and the hits of one
// page with the number of matches.
type query struct {
	kind   string
	words  []string // all must match; none: no text
	phrase bool     // words side by side, in this order
	// tag, if set, must equal the document's; the size range applies
	// when sizeHi > sizeLo.
	tag            string
	sizeLo, sizeHi float64
	facets         bool // count tag, source and rank (with rank's stats) over the matches
	bySize         bool // sort by size, descending, instead of relevance
	offset         int
}

// outcome is what a query found: the number of matches, the page's hits,
// its first hit's id and, with facets, a digest of them. Printed beside
// the latencies so that a reader sees that the engines did the same work.
type outcome struct {
	found   int64
	hits    int
	firstID int64
	facets  string // "tag00=120 source001=40 rank sum=360"
}

// The query kinds, in the order of the report.
var kinds = []struct{ name, desc string }{
	{"rare", "a rare word"},
	{"common", "a common word"},
	{"phrase", "a phrase of two frequent words"},
	{"filter", "filter only: tag and size range, in id order"},
	{"facets", "word + size range + 3 facets (rank with stats) + sort by size"},
	{"deep", "the common word, a page deep down"},
}

// queries returns the corpus's query of each kind.
func queries(t terms) []query {
	return []query{
		{kind: "rare", words: []string{t.Rare}},
		{kind: "common", words: []string{t.Common}},
		{kind: "phrase", words: t.Phrase[:], phrase: true},
		{kind: "filter", tag: t.FilterTag, sizeLo: t.SizeLo, sizeHi: t.SizeHi},
		{kind: "facets", words: []string{t.Medium}, sizeLo: t.SizeLo, sizeHi: t.SizeHi, facets: true, bySize: true},
		{kind: "deep", words: []string{t.Common}, offset: t.DeepOffset},
	}
}

func (q query) text() string {
	if q.phrase {
		return `"` + strings.Join(q.words, " ") + `"`
	}
	return strings.Join(q.words, " ")
}

func (q query) String() string {
	var parts []string
	if len(q.words) > 0 {
		parts = append(parts, "q "+q.text())
	}
	if q.tag != "" {
		parts = append(parts, "tag = "+q.tag)
	}
	if q.sizeHi > q.sizeLo {
		parts = append(parts, fmt.Sprintf("%g ≤ size < %g", q.sizeLo, q.sizeHi))
	}
	if q.facets {
		parts = append(parts, "facets tag, source, rank")
	}
	if q.bySize {
		parts = append(parts, "by size desc")
	}
	if q.offset > 0 {
		parts = append(parts, fmt.Sprintf("hits %d–%d", q.offset+1, q.offset+pageSize))
	}
	return strings.Join(parts, "; ")
}

// engine is a search engine under comparison.
type engine interface {
	name() string
	// load stores the documents, in transactions of batch documents from
	// clients at once, and returns once every one is searchable.
	load(ctx context.Context, docs []doc, batch, clients int) error
	search(ctx context.Context, q query) (outcome, error)
	// insert stores one document and returns once it is committed
	// (durably) and acknowledged.
	insert(ctx context.Context, d doc) error
	close()
}

// facetDigest renders the counts of the facets' first values and the sum
// of rank, the same way for every engine.
func facetDigest(topTag string, topTagN int64, topSource string, topSourceN int64, rankCount int64, rankSum float64) string {
	return fmt.Sprintf("%s=%d %s=%d rank n=%d sum=%g", topTag, topTagN, topSource, topSourceN, rankCount, rankSum)
}
