package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"

	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/search/fields"
)

// A grouped search pages over groups of hits, not hits, as the original's
// search engine (Typesense 0.24) grouped them: the matches that hold the
// same values of the grouped fields form a group; the groups come in the
// order of their best hit (by the plan's sort: relevance, or the
// request's sort, then the storage key), and each shows its first Hits
// hits in that order. Found is the number of groups.
//
// A match's group is read from the `$kw.` term columns of its segment
// (the facets' columns), or from the shadows' doc values when the columns
// are over their budget: never from the documents.
//
// Memory is bounded: the search keeps the best `from + size` groups seen
// so far (a group pushed out by better ones can only come back through a
// better hit, so the kept ones are exactly the best), a hash of every
// group seen to count them (at most MaxGroups, else ErrTooManyGroups),
// and the hits of the kept groups only when they are few (at most
// onePassHits); otherwise a second pass over the matches collects the
// hits of the page's groups alone.

// Group asks a plan for its hits grouped by the values of fields.
type Group struct {
	// Paths are the fields grouped by, each with a `$kw.` shadow.
	Paths []string
	// Hits is the most hits a group shows.
	Hits int
}

// HitGroup is one group of a grouped page.
type HitGroup struct {
	// Keys are the group's value of each field, in the order of the
	// plan's paths: the value as its facet shows it; "" for a document
	// without one (absent, null, an empty array), which groups with the
	// empty string; and for an array of several distinct values, those
	// values in byte order as a JSON array of strings.
	Keys []string
	// Hits are the storage keys of the group's first hits, in order.
	Hits [][]byte
}

// MaxGroups is the most groups a grouped search counts among its
// matches; a search whose matches fall into more fails with
// ErrTooManyGroups rather than hold them all.
const MaxGroups = 100_000

// ErrTooManyGroups: the matches of a grouped search fall into more than
// MaxGroups groups.
var ErrTooManyGroups = errors.New("search: the matches fall into more groups than a search counts")

// onePassHits is the most hits a grouped search keeps while it looks for
// its groups; a page whose groups may show more is read in a second pass.
const onePassHits = 10_000

// groupPage is Page for a plan with a Group: from and size count groups.
func (s *Searcher) groupPage(ctx context.Context, r index.IndexReader, snap *indexSnapshot, ok bool, p *Plan, from, size int, withFacets bool) (*Result, error) {
	want := from + size
	g := &grouping{limit: max(p.Group.Hits, 1), want: want, keepHits: want*max(p.Group.Hits, 1) <= onePassHits,
		tracked: map[string]*hitGroup{}, seen: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
	res, err := s.collectGroups(ctx, r, snap, ok, p, withFacets, g, g.first)
	if err != nil {
		return nil, err
	}
	res.Found = uint64(len(g.seen))
	best := slices.Clone(g.heap)
	slices.SortFunc(best, func(a, b *hitGroup) int { return g.compare(a.best, b.best) })
	var page []*hitGroup
	if from < len(best) {
		page = best[from:min(len(best), want)]
	}
	if len(page) > 0 && !(g.keepHits && len(g.seen) <= want) {
		// Some group lost hits while it was not among the best so far
		// (or hits were not kept): read the page's groups' hits again.
		g.pageOnly = map[string]*hitGroup{}
		for _, hg := range page {
			hg.hits = hg.hits[:0]
			g.pageOnly[hg.id] = hg
		}
		if _, err := s.collectGroups(ctx, r, snap, ok, p, false, g, g.second); err != nil {
			return nil, err
		}
	}
	res.Groups = make([]HitGroup, len(page))
	for i, hg := range page {
		out := HitGroup{Keys: hg.keys, Hits: make([][]byte, len(hg.hits))}
		for j, h := range hg.hits {
			id := h.ID
			if id == "" {
				if id, err = r.ExternalID(h.IndexInternalID); err != nil {
					return nil, fmt.Errorf("search: %w", err)
				}
			}
			if out.Hits[j], err = fields.KeyOf(id); err != nil {
				return nil, fmt.Errorf("search: hit id %q: %w", id, err)
			}
		}
		res.Groups[i] = out
	}
	return res, nil
}

// collectGroups runs the plan's search and hands each match, its sort
// key computed, to handle with its group, as Bleve's collector pulls it
// (a handler of the collector's in place of its own, which would keep
// the best hits); with facets, they are counted as Page counts them. g
// compares by the sort the collector computed: a pass may read it from
// columns and the next from doc values, over the columns' budget.
func (s *Searcher) collectGroups(ctx context.Context, r index.IndexReader, snap *indexSnapshot, ok bool, p *Plan, withFacets bool,
	g *grouping, handle func(d *bsearch.DocumentMatch, key groupKey) error) (*Result, error) {
	keys, err := newGroupKeys(r, snap, ok, p.Group.Paths, s)
	if err != nil {
		return nil, err
	}
	ran, err := s.prepareRun(ctx, r, snap, ok, p, 1, 0, withFacets)
	if err != nil {
		return nil, err
	}
	defer ran.searcher.Close()
	g.setOrder(ran.order)
	ctx = context.WithValue(ran.ctx, bsearch.MakeDocumentMatchHandlerKey, bsearch.MakeDocumentMatchHandler(
		func(sc *bsearch.SearchContext) (bsearch.DocumentMatchHandler, bool, error) {
			return func(d *bsearch.DocumentMatch) error {
				if d == nil {
					return nil
				}
				key, err := keys.of(d.IndexInternalID)
				if err == nil {
					err = handle(d, key)
				}
				sc.DocumentMatchPool.Put(d)
				return err
			}, false, nil
		}))
	if err := ran.coll.Collect(ctx, ran.searcher, r); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return ran.result(p), nil
}

// grouping is the state of a grouped search.
type grouping struct {
	order                     bsearch.SortOrder
	cachedScoring, cachedDesc []bool
	limit, want               int
	keepHits                  bool
	// tracked are the best groups so far, at most want; heap holds them
	// too, the worst on top.
	tracked map[string]*hitGroup
	heap    []*hitGroup
	// seen holds a hash of every group's id, to count them.
	seen map[uint64]struct{}
	seed maphash.Seed
	// pageOnly are the page's groups, in the second pass.
	pageOnly map[string]*hitGroup
}

// hitGroup is one group being collected.
type hitGroup struct {
	id   string // the values of the fields, unambiguously (groupKey.id)
	keys []string
	best *bsearch.DocumentMatch
	hits []*bsearch.DocumentMatch // in order, at most limit
	at   int                      // its place in the heap
}

func (g *grouping) setOrder(order bsearch.SortOrder) {
	g.order, g.cachedScoring, g.cachedDesc = order, order.CacheIsScore(), order.CacheDescending()
}

// compare orders two matches as the page would: < 0 if a comes first.
func (g *grouping) compare(a, b *bsearch.DocumentMatch) int {
	return g.order.Compare(g.cachedScoring, g.cachedDesc, a, b)
}

// keep is a copy of a match the pool may reuse: what compare and the
// page need of it.
func keep(d *bsearch.DocumentMatch) *bsearch.DocumentMatch {
	return &bsearch.DocumentMatch{IndexInternalID: slices.Clone(d.IndexInternalID), ID: d.ID, Score: d.Score,
		Sort: slices.Clone(d.Sort), HitNumber: d.HitNumber}
}

// first takes a match in the first pass: counted in its group, the group
// kept if among the best so far, the match among its hits if it is among
// the group's first.
func (g *grouping) first(d *bsearch.DocumentMatch, key groupKey) error {
	g.seen[maphash.Bytes(g.seed, key.id)] = struct{}{}
	if len(g.seen) > MaxGroups {
		return ErrTooManyGroups
	}
	if hg := g.tracked[string(key.id)]; hg != nil {
		if g.compare(d, hg.best) < 0 {
			hg.best = keep(d)
			g.fix(hg.at)
		}
		if g.keepHits {
			g.addHit(hg, d)
		}
		return nil
	}
	if g.want == 0 {
		return nil
	}
	if len(g.heap) == g.want {
		worst := g.heap[0]
		if g.compare(d, worst.best) >= 0 {
			return nil
		}
		delete(g.tracked, worst.id)
		g.heap[0] = g.heap[len(g.heap)-1]
		g.heap = g.heap[:len(g.heap)-1]
		if len(g.heap) > 0 {
			g.heap[0].at = 0
			g.fix(0)
		}
	}
	hg := &hitGroup{id: string(key.id), keys: key.render(), best: keep(d)}
	if g.keepHits {
		hg.hits = []*bsearch.DocumentMatch{hg.best}
	}
	g.tracked[hg.id] = hg
	hg.at = len(g.heap)
	g.heap = append(g.heap, hg)
	g.fix(hg.at)
	return nil
}

// second takes a match in the second pass: among its group's hits if the
// group is on the page.
func (g *grouping) second(d *bsearch.DocumentMatch, key groupKey) error {
	if hg := g.pageOnly[string(key.id)]; hg != nil {
		g.addHit(hg, d)
	}
	return nil
}

// addHit puts d among hg's first hits if it is one of them.
func (g *grouping) addHit(hg *hitGroup, d *bsearch.DocumentMatch) {
	if len(hg.hits) == g.limit && g.compare(d, hg.hits[len(hg.hits)-1]) >= 0 {
		return
	}
	i := sort.Search(len(hg.hits), func(i int) bool { return g.compare(d, hg.hits[i]) < 0 })
	if len(hg.hits) == g.limit {
		hg.hits = hg.hits[:len(hg.hits)-1]
	}
	hg.hits = slices.Insert(hg.hits, i, keep(d))
}

// fix restores the heap (the worst best hit on top) around place i.
func (g *grouping) fix(i int) {
	worse := func(a, b int) bool { return g.compare(g.heap[a].best, g.heap[b].best) > 0 }
	swap := func(a, b int) {
		g.heap[a], g.heap[b] = g.heap[b], g.heap[a]
		g.heap[a].at, g.heap[b].at = a, b
	}
	for i > 0 && worse(i, (i-1)/2) {
		swap(i, (i-1)/2)
		i = (i - 1) / 2
	}
	for {
		l, top := 2*i+1, i
		if l < len(g.heap) && worse(l, top) {
			top = l
		}
		if l+1 < len(g.heap) && worse(l+1, top) {
			top = l + 1
		}
		if top == i {
			return
		}
		swap(i, top)
		i = top
	}
}

// groupKey is a match's values of the grouped fields: each field's
// distinct terms of its `$kw.` shadow, in byte order.
type groupKey struct {
	// id is each field's terms, counted and each length-prefixed; it is
	// valid until the next match's key is read (no allocation a match).
	id     []byte
	fields int
}

// render is the key's values as HitGroup.Keys has them.
func (k groupKey) render() []string {
	out := make([]string, 0, k.fields)
	b := k.id
	for range k.fields {
		n, w := binary.Uvarint(b)
		b = b[w:]
		terms := make([]string, n)
		for i := range terms {
			l, w := binary.Uvarint(b)
			terms[i], b = string(b[w:w+int(l)]), b[w+int(l):]
		}
		switch len(terms) {
		case 1:
			out = append(out, terms[0])
		default:
			j, _ := json.Marshal(terms)
			out = append(out, string(j))
		}
	}
	return out
}

// groupKeys reads the matches' group keys: from term columns, or from doc
// values.
type groupKeys struct {
	paths   []string
	shadows []string // each path's $kw. shadow
	// cols is each field's column in each segment; nil: doc values.
	cols [][]*termColumn
	docs docLocator
	dv   index.DocValueReader
	buf  []byte
	// terms gathers a match's terms from doc values, a list a field.
	terms [][]string
}

func newGroupKeys(r index.IndexReader, snap *indexSnapshot, ok bool, paths []string, s *Searcher) (*groupKeys, error) {
	gk := &groupKeys{paths: paths}
	if ok && s.Columns != nil {
		segs := snap.Segments()
		gk.cols, gk.docs = make([][]*termColumn, len(paths)), newDocLocator(segs)
		cols := s.columns()
		for i, path := range paths {
			gk.cols[i] = make([]*termColumn, len(segs))
			for n, ss := range segs {
				c, err := cols.nc.termsColumn(cols.index, ss, fields.Keyword(path))
				if err == errColumnBudget {
					gk.cols = nil
					break
				}
				if err != nil {
					return nil, fmt.Errorf("search: %w", err)
				}
				gk.cols[i][n] = c
			}
			if gk.cols == nil {
				break
			}
		}
		if gk.cols != nil {
			return gk, nil
		}
	}
	gk.shadows = make([]string, len(paths))
	for i, p := range paths {
		gk.shadows[i] = fields.Keyword(p)
	}
	dv, err := r.DocValueReader(gk.shadows)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	gk.dv, gk.terms = dv, make([][]string, len(paths))
	return gk, nil
}

// of is the group key of the match with Bleve's id id. A field without a
// value groups as the empty string.
func (gk *groupKeys) of(id index.IndexInternalID) (groupKey, error) {
	b := gk.buf[:0]
	if gk.cols != nil {
		seg, doc, ok := gk.docs.locate(id)
		for f := range gk.paths {
			var ords []uint32
			if ok {
				ords = gk.cols[f][seg].of(doc)
			}
			if len(ords) == 0 {
				b = append(b, 1, 0) // one term, ""
				continue
			}
			b = binary.AppendUvarint(b, uint64(len(ords)))
			for _, o := range ords {
				t := gk.cols[f][seg].terms[o]
				b = binary.AppendUvarint(b, uint64(len(t)))
				b = append(b, t...)
			}
		}
	} else {
		for f := range gk.terms {
			gk.terms[f] = gk.terms[f][:0]
		}
		err := gk.dv.VisitDocValues(id, func(field string, term []byte) {
			for f, shadow := range gk.shadows {
				if field == shadow {
					gk.terms[f] = append(gk.terms[f], string(term))
				}
			}
		})
		if err != nil {
			return groupKey{}, fmt.Errorf("search: %w", err)
		}
		for _, terms := range gk.terms {
			slices.Sort(terms)
			terms = slices.Compact(terms)
			if len(terms) == 0 {
				b = append(b, 1, 0)
				continue
			}
			b = binary.AppendUvarint(b, uint64(len(terms)))
			for _, t := range terms {
				b = binary.AppendUvarint(b, uint64(len(t)))
				b = append(b, t...)
			}
		}
	}
	gk.buf = b
	return groupKey{id: b, fields: len(gk.paths)}, nil
}
