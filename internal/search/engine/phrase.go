package engine

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// phraseQuery matches the documents whose field holds the phrase's words
// side by side, in order, within one array element. It finds the same
// documents with the same scores as Bleve's match-phrase query (the sum
// of the words' BM25 scores), but checks adjacency on the words' position
// lists as the postings hand them over, where Bleve first copies every
// candidate's positions into maps of maps; with two frequent words that
// copying was a third of a phrase search's CPU.
type phraseQuery struct {
	field string
	// words[i] are the terms that may stand at offset i of the phrase;
	// none where the analyzer dropped a word (any word may stand there).
	words [][]string
}

// NewPhraseQuery is the phrase text over field, analyzed with an; nil if
// the analyzer leaves no word of it.
func NewPhraseQuery(text, field string, an analysis.Analyzer) query.Query {
	tokens := an.Analyze([]byte(text))
	if len(tokens) == 0 {
		return nil
	}
	first, last := tokens[0].Position, tokens[0].Position
	for _, t := range tokens {
		first, last = min(first, t.Position), max(last, t.Position)
	}
	words := make([][]string, last-first+1)
	for _, t := range tokens {
		i := t.Position - first
		if !slices.Contains(words[i], string(t.Term)) {
			words[i] = append(words[i], string(t.Term))
		}
	}
	return &phraseQuery{field: field, words: words}
}

func (q *phraseQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	opts.IncludeTermVectors = true
	var parts []bsearch.Searcher // one per offset with words
	var ts []bsearch.Searcher    // the current offset's words
	fail := func(err error) (bsearch.Searcher, error) {
		for _, s := range slices.Concat(parts, ts) {
			s.Close()
		}
		return nil, err
	}
	for _, alts := range q.words {
		ts = ts[:0]
		for _, w := range alts {
			s, err := searcher.NewTermSearcher(ctx, r, w, q.field, 1, opts)
			if err != nil {
				return fail(err)
			}
			ts = append(ts, s)
		}
		switch len(ts) {
		case 0:
		case 1:
			parts = append(parts, ts[0])
		default:
			d, err := searcher.NewDisjunctionSearcher(ctx, r, slices.Clone(ts), 1, opts)
			if err != nil {
				return fail(err)
			}
			parts = append(parts, d)
		}
	}
	ts = nil // each is in parts now, alone or in its disjunction
	must, err := searcher.NewConjunctionSearcher(ctx, r, parts, opts)
	if err != nil {
		return fail(err)
	}
	must.SetQueryNorm(1 / math.Sqrt(must.Weight())) // as Bleve's phrase searcher does
	return &phraseSearcher{must: must, field: q.field, words: q.words, at: make([][]*bsearch.Location, len(q.words))}, nil
}

// phraseSearcher passes on the matches of must (every word of the phrase
// in the document) that hold the words side by side.
type phraseSearcher struct {
	must  bsearch.Searcher
	field string
	words [][]string
	at    [][]*bsearch.Location // per offset, the candidate's positions of its words (reused)
}

func (s *phraseSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	for {
		dm, err := s.must.Next(ctx)
		if dm == nil || err != nil {
			return nil, err
		}
		if s.holds(dm) {
			return dm, nil
		}
		ctx.DocumentMatchPool.Put(dm)
	}
}

func (s *phraseSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	dm, err := s.must.Advance(ctx, id)
	if dm == nil || err != nil {
		return nil, err
	}
	if s.holds(dm) {
		return dm, nil
	}
	ctx.DocumentMatchPool.Put(dm)
	return s.Next(ctx)
}

// holds tells whether the candidate dm has the phrase: a position p of
// the first word such that the word of offset i stands at p+i, in the same
// array element. The positions are dropped from dm on the way out: nothing
// downstream asks for them, and Bleve would build its maps from them.
func (s *phraseSearcher) holds(dm *bsearch.DocumentMatch) bool {
	for i := range s.at {
		s.at[i] = s.at[i][:0]
	}
	for j := range dm.FieldTermLocations {
		ftl := &dm.FieldTermLocations[j]
		if ftl.Field != s.field {
			continue
		}
		for i, alts := range s.words {
			if slices.Contains(alts, ftl.Term) {
				s.at[i] = append(s.at[i], &ftl.Location)
			}
		}
	}
	dm.FieldTermLocations = dm.FieldTermLocations[:0]
	byPos := func(a, b *bsearch.Location) int {
		switch {
		case a.Pos < b.Pos:
			return -1
		case a.Pos > b.Pos:
			return 1
		}
		return 0
	}
	first := -1
	for i, locs := range s.at {
		if len(s.words[i]) == 0 {
			continue
		}
		if len(locs) == 0 {
			return false
		}
		if !slices.IsSortedFunc(locs, byPos) {
			slices.SortFunc(locs, byPos)
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return false
	}
next:
	for _, start := range s.at[first] {
		for i := first + 1; i < len(s.at); i++ {
			if len(s.words[i]) == 0 {
				continue
			}
			if !standsAt(s.at[i], start.Pos+uint64(i-first), start.ArrayPositions) {
				continue next
			}
		}
		return true
	}
	return false
}

// standsAt tells whether locs (sorted by position) has one at pos in the
// array element ap.
func standsAt(locs []*bsearch.Location, pos uint64, ap bsearch.ArrayPositions) bool {
	k := sort.Search(len(locs), func(k int) bool { return locs[k].Pos >= pos })
	for ; k < len(locs) && locs[k].Pos == pos; k++ {
		if locs[k].ArrayPositions.Equals(ap) {
			return true
		}
	}
	return false
}

func (s *phraseSearcher) Close() error               { return s.must.Close() }
func (s *phraseSearcher) Weight() float64            { return s.must.Weight() }
func (s *phraseSearcher) SetQueryNorm(qnorm float64) { s.must.SetQueryNorm(qnorm) }
func (s *phraseSearcher) Count() uint64              { return s.must.Count() } // at most
func (s *phraseSearcher) Min() int                   { return 0 }
func (s *phraseSearcher) Size() int                  { return s.must.Size() + 64 }
func (s *phraseSearcher) DocumentMatchPoolSize() int { return s.must.DocumentMatchPoolSize() + 1 }
