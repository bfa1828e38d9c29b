package ops

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search"
)

// SearchRequest is a full-text search of a collection: of its documents,
// or of the stored messages of a messages collection.
type SearchRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Q              string
	SearchFields   []string
	Filter         []byte // JSON, the read filter's syntax; none matches all
	// Facet is the facets asked for, as the wire has them: a JSON object
	// mapping a field to {"size": N} (no size, or 0: the default, 10).
	Facet []byte
	// Sort is [{"field":"$asc"}, {"other":"$desc"}].
	Sort                         []byte
	IncludeFields, ExcludeFields []string
	// PageSize defaults to DefaultSearchPageSize; Page 0 streams every
	// page.
	PageSize, Page int
	Collation      Collation
	// GroupBy is the group_by of the 2023 API, as the wire has it:
	// {"fields":["city"],"limit":3}; none: the hits are not grouped.
	GroupBy []byte
	// Vector is the 2023 API's vector query, {"field":[numbers]} with an
	// optional "top_k": the nearest documents on a vector field, by its
	// distance, among those the filter matches (search.PrepareVector).
	Vector []byte
}

// SearchHit is one document of a search page.
type SearchHit struct {
	Data                 []byte
	CreatedAt, UpdatedAt time.Time
	// VectorDistance is a vector search's hit's distance to the query
	// (nil in other searches), as a float32 computed it.
	VectorDistance *float64
}

// SearchFacet is a facet's counts and stats (an alias: the transports
// see it through ops only).
type SearchFacet = search.FacetResult

// SearchPage is one page of a search, with the facets and the number of
// matches.
type SearchPage struct {
	Hits []SearchHit
	// Groups are the page's groups, for a search with a group_by (Hits
	// is then empty, and Found and the pages count groups).
	Groups     []SearchGroup
	Facets     map[string]SearchFacet
	Found      int64
	TotalPages int32
	Page, Size int32
}

// SearchGroup is one group of a grouped search page: the group's value of
// each group_by field, and its first hits.
type SearchGroup struct {
	Keys []string
	Hits []SearchHit
}

// MaxGroupedPageHits bounds the hits of a grouped page (page_size groups
// of at most the group_by limit each), as MaxSearchWindow bounds those of
// a search.
const MaxGroupedPageHits = MaxSearchWindow

// Search limits: a page holds at most MaxSearchPageSize hits, and no hit
// past MaxSearchWindow (page × page size) is served, so that a search
// holds a bounded number of hits in memory at any time.
const (
	DefaultSearchPageSize = 20
	MaxSearchPageSize     = 1000
	MaxSearchWindow       = 10_000
)

// DefaultSearchWait bounds how long a search waits for the index to catch
// up with the writes acknowledged before it arrived (Config.SearchWait).
const DefaultSearchWait = 5 * time.Second

// Search runs a full-text search and calls emit with each page: the one
// asked for, or, with no page, every page from the first until one comes
// back empty (one empty page when nothing matched). The search first
// waits until the index holds every write committed before it arrived;
// each hit's document is then read from the store, all in one read-only
// transaction, so a hit shows committed data only and a document deleted
// since it was indexed is left out. A page's documents are valid only
// until emit returns: emit writes them out or copies them.
func (o *Ops) Search(ctx context.Context, c Caller, req SearchRequest, emit func(SearchPage) error) (err error) {
	ctx, op, err := o.open(ctx, c, "Search")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return err
	}
	return o.searchIn(ctx, c, db, req, func(tx kv.Tx) (*catalog.Collection, error) {
		return o.catalog.Lookup(ctx, tx, c.ns(), db.stored, req.Collection)
	}, emit)
}

// searchIn is a search of the collection lookup finds in database db: a
// collection's (Search) or a search index's (IndexSearch), whose
// documents are stored and indexed alike.
func (o *Ops) searchIn(ctx context.Context, c Caller, db target, req SearchRequest, lookup func(kv.Tx) (*catalog.Collection, error), emit func(SearchPage) error) error {
	if err := checkSearchRequest(&req); err != nil {
		return err
	}
	facets, err := parseFacets(req.Facet)
	if err != nil {
		return err
	}
	groupBy, err := parseGroupBy(req.GroupBy, req.PageSize)
	if err != nil {
		return err
	}
	// The body's shape before the collection, as a read checks it.
	sort, err := parseSort(req.Sort)
	if err != nil {
		return err
	}
	if o.search == nil {
		return apierror.Errorf(apierror.Unimplemented, "search is not enabled on this server")
	}
	// A search holds a storage connection while its client receives it,
	// as a read does.
	release, err := o.reads.take(ctx)
	if err != nil {
		return err
	}
	defer release()
	var coll *catalog.Collection
	var f filter.Filter
	var prepared *search.Prepared
	var nearest *search.VectorQuery
	err = o.inTx(ctx, c, db, TxRef{}, func(tx kv.Tx) (err error) {
		coll, err = lookup(tx)
		if err != nil {
			return err
		}
		if f, err = parseSearchFilter(req.Filter, coll.Schema, req.Collation); err != nil {
			return err
		}
		sreq := search.Request{Q: req.Q, SearchFields: req.SearchFields, Filter: f, Facets: facets, GroupBy: groupBy}
		for _, s := range sort {
			sreq.Sort = append(sreq.Sort, search.SortField{Path: s.Path, Desc: s.Desc})
		}
		if !isNull(req.Vector) {
			if nearest, err = prepareNearest(coll, req, sreq); err != nil {
				return err
			}
			// The plan finds the filter's matches (and counts their
			// facets); the graph orders them.
			sreq = search.Request{Filter: f, Facets: facets}
		}
		prepared, err = search.Prepare(coll.Schema, sreq)
		return err
	})
	if err != nil {
		return err
	}
	wctx, wcancel := context.WithTimeout(ctx, o.cfg.SearchWait)
	defer wcancel()
	// The store's position now, after the search arrived and found its
	// collection: every write acknowledged before the search, and the
	// collection's creation, are at or below it.
	arrived, err := o.committedPosition(wctx)
	if err != nil {
		if wctx.Err() != nil && ctx.Err() == nil {
			return search.ErrBehind
		}
		return err
	}
	if err := o.search.WaitFor(wctx, coll.ID, arrived); err != nil {
		return err
	}
	searcher, err := o.search.Searcher(coll.ID)
	if err != nil {
		return err
	}
	var neighbours []search.VectorHit
	if nearest != nil {
		var within *search.Prepared
		if !f.MatchesAll() {
			within = prepared
		}
		if neighbours, err = searcher.Nearest(ctx, nearest, nearestK(nearest, req), within); err != nil {
			return err
		}
	}
	ps := &pageSearch{o: o, req: req, coll: coll, filter: f, docBuf: fetchBuffers.Get().(*[]byte)}
	ps.include, ps.exclude = fieldSet(req.IncludeFields), fieldSet(req.ExcludeFields)
	err = o.run(ctx, func(tx kv.Tx) error {
		return servePages(ctx, searchPages{searcher: searcher, prepared: prepared, page: req.Page, pageSize: req.PageSize, emit: emit,
			fetch: func(ctx context.Context, keys [][]byte) ([]SearchHit, []bool, error) { return ps.fetch(ctx, tx, keys) },
			keep:  ps.keep, nearest: neighbours, vector: nearest != nil})
	})
	// An emit that failed may have left its consumer still reading the
	// page (a gRPC send past its timeout): that buffer is not reused.
	if err == nil && cap(*ps.docBuf) <= maxPooledFetch {
		fetchBuffers.Put(ps.docBuf)
	}
	return err
}

// fetchBuffers keep the buffers search pages read their documents into
// from one search to the next: filling fresh memory with each page's
// documents was a third of the server's CPU under a filter-only search of
// 4 KB mails.
var fetchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFetch: a buffer grown past this by a page of large documents
// is left to the garbage collector rather than kept.
const maxPooledFetch = 4 << 20

// settledStore is a store whose LastPosition may be below a commit already
// acknowledged (sqlkv stops at its log horizon, below the oldest open
// transaction); SettledPosition waits until it is not. Checking for it
// here keeps ops from importing a backend.
type settledStore interface {
	SettledPosition(ctx context.Context) (kv.Position, error)
}

// committedPosition is a position at or past every commit acknowledged
// before the call, that the change log's readers can reach.
func (o *Ops) committedPosition(ctx context.Context) (kv.Position, error) {
	if s, ok := o.store.(settledStore); ok {
		return s.SettledPosition(ctx)
	}
	return o.store.LastPosition(ctx)
}

// checkSearchRequest checks what needs no schema, and fills in defaults.
func checkSearchRequest(req *SearchRequest) error {
	if len(req.IncludeFields) > 0 && len(req.ExcludeFields) > 0 {
		return apierror.Errorf(apierror.InvalidArgument, "include_fields and exclude_fields cannot both be given")
	}
	if req.Page < 0 || req.PageSize < 0 {
		return apierror.Errorf(apierror.InvalidArgument, "page and page_size must not be negative")
	}
	if req.PageSize == 0 {
		req.PageSize = DefaultSearchPageSize
	}
	if req.PageSize > MaxSearchPageSize {
		return apierror.Errorf(apierror.InvalidArgument, "page_size %d is above the limit of %d", req.PageSize, MaxSearchPageSize)
	}
	if req.Page > 0 && int64(req.Page)*int64(req.PageSize) > MaxSearchWindow {
		return apierror.Errorf(apierror.InvalidArgument, "page %d of size %d reaches past the first %d hits, the most a search serves", req.Page, req.PageSize, MaxSearchWindow)
	}
	return nil
}

// parseFacets reads the facet object of a search, {"brand":{"size":10}},
// into each field's size (0 for the default); sizes may be JSON numbers
// or strings holding one, as proto3's JSON mapping writes int64.
func parseFacets(raw []byte) (map[string]int, error) {
	if isNull(raw) {
		return nil, nil
	}
	var specs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &specs); err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "facet must be an object mapping fields to {\"size\":N}")
	}
	out := make(map[string]int, len(specs))
	for field, spec := range specs {
		var s struct {
			Size json.Number `json:"size"` // a number, or a string holding one
		}
		size, err := int64(0), json.Unmarshal(spec, &s)
		if err == nil && s.Size != "" {
			size, err = s.Size.Int64()
		}
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "facet '%s' must be an object such as {\"size\":10}", field)
		}
		out[field] = int(max(min(size, 1<<31-1), -1<<31))
	}
	return out, nil
}

func parseSearchFilter(raw []byte, s *schema.Schema, c Collation) (filter.Filter, error) {
	if isNull(raw) {
		return filter.Filter{}, nil
	}
	f, err := filter.Parse(raw, s, c.filter())
	if err != nil {
		return f, err
	}
	if op := f.DocumentOnly(); op != "" {
		return f, apierror.Errorf(apierror.InvalidArgument, "search filters do not take %s: the search index counts and facets what a filter selects, and cannot answer it; use it in a read's filter", op)
	}
	return f, nil
}

// pageSearch reads the hits of a collection's search from the store.
type pageSearch struct {
	o      *Ops
	req    SearchRequest
	coll   *catalog.Collection
	filter filter.Filter
	// docBuf holds the documents of the page being read; a page's hits
	// alias it until the next page is read.
	docBuf *[]byte

	include, exclude map[string]bool
}

// keep checks a hit's document and projects it. The index answers some
// filters loosely (array elements, numbers past 2^53): the document
// itself decides.
func (ps *pageSearch) keep(hit *SearchHit) (bool, error) {
	if match, err := ps.filter.Matches(hit.Data); err != nil || !match {
		return false, nil
	}
	var err error
	hit.Data, err = jsondoc.Project(hit.Data, ps.include, ps.exclude)
	return err == nil, err
}

// searchPages is a search ready to serve: what servePages needs of any
// search, of a collection's documents or messages or of a search index's
// documents.
type searchPages struct {
	searcher *search.Searcher
	prepared *search.Prepared
	// page is the page asked for (from 1); 0: every page. pageSize counts
	// hits, or groups for a grouped search.
	page, pageSize int
	// fetch reads the hits' documents by their storage keys, in one read;
	// found[i] is false for a key deleted since it was indexed.
	fetch func(ctx context.Context, keys [][]byte) (hits []SearchHit, found []bool, err error)
	// keep checks a fetched hit (the filter on the document itself) and
	// projects it, and reports whether it stays.
	keep func(hit *SearchHit) (bool, error)
	emit func(SearchPage) error
	// vector marks a vector search, whose hits are nearest, in order
	// (searched once, paged here).
	vector  bool
	nearest []search.VectorHit
}

// servePages emits the page asked for, or, without one, every page from
// the first until the index has no more: hits, or groups of hits when
// the request has a group_by (the same pages, each holding pageSize
// groups). The facets of the first page go with every page.
func servePages(ctx context.Context, sp searchPages) error {
	if sp.page > 0 {
		page, _, err := sp.read(ctx, sp.page, true)
		if err != nil {
			return err
		}
		return sp.emit(page)
	}
	var facets map[string]search.FacetResult
	for n := 1; int64(n)*int64(sp.pageSize) <= MaxSearchWindow; n++ {
		page, indexed, err := sp.read(ctx, n, n == 1)
		if err != nil {
			return err
		}
		if n == 1 {
			facets = page.Facets
		}
		page.Facets = facets
		// The end is where the index has no more, not where a page's hits
		// all fell to the documents' own check (deleted since they were
		// indexed, or matched only loosely): the next page may hold real
		// ones. Such an emptied page is not sent, but the first page always
		// is, as the one answer to a search that found nothing.
		if len(page.Hits) > 0 || len(page.Groups) > 0 || n == 1 {
			if err := sp.emit(page); err != nil {
				return err
			}
		}
		if indexed == 0 || int64(n)*int64(sp.pageSize) >= page.Found {
			return nil
		}
	}
	return nil
}

// read searches page n (1-based) and reads its documents; indexed is how
// many hits (or groups) the index gave for it, before the documents' own
// check.
func (sp *searchPages) read(ctx context.Context, n int, withFacets bool) (_ SearchPage, indexed int, _ error) {
	size := sp.pageSize
	if sp.vector {
		return sp.readNearest(ctx, n, withFacets)
	}
	res, err := sp.searcher.Page(ctx, sp.prepared, (n-1)*size, size, withFacets)
	if err != nil {
		return SearchPage{}, 0, err
	}
	page := SearchPage{Hits: []SearchHit{}, Facets: res.Facets, Found: int64(res.Found), Page: int32(n), Size: int32(size),
		TotalPages: int32((int64(res.Found) + int64(size) - 1) / int64(size))}
	if page.Facets == nil {
		page.Facets = map[string]search.FacetResult{}
	}
	if res.Groups != nil || sp.prepared.Group != nil {
		page.Groups, err = sp.readGroups(ctx, res.Groups)
		return page, len(res.Groups), err
	}
	page.Hits, err = sp.readHits(ctx, res.Keys)
	return page, len(res.Keys), err
}

// readHits reads the documents of keys and keeps those that pass.
func (sp *searchPages) readHits(ctx context.Context, keys [][]byte) ([]SearchHit, error) {
	hits, found, err := sp.fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for i := range hits {
		if !found[i] {
			continue // deleted since it was indexed
		}
		switch ok, err := sp.keep(&hits[i]); {
		case err != nil:
			return nil, err
		case ok:
			out = append(out, hits[i])
		}
	}
	return out, nil
}

// readGroups reads the documents of every group's hits in one fetch; a
// group none of whose hits pass is left out, as an ungrouped page leaves
// out its hits.
func (sp *searchPages) readGroups(ctx context.Context, groups []search.HitGroup) ([]SearchGroup, error) {
	var keys [][]byte
	for _, g := range groups {
		keys = append(keys, g.Hits...)
	}
	hits, found, err := sp.fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := []SearchGroup{}
	at := 0
	for _, g := range groups {
		sg := SearchGroup{Keys: g.Keys, Hits: []SearchHit{}}
		for i := at; i < at+len(g.Hits); i++ {
			if !found[i] {
				continue
			}
			switch ok, err := sp.keep(&hits[i]); {
			case err != nil:
				return nil, err
			case ok:
				sg.Hits = append(sg.Hits, hits[i])
			}
		}
		at += len(g.Hits)
		if len(sg.Hits) > 0 {
			out = append(out, sg)
		}
	}
	return out, nil
}

// fetch reads a page's hits from the store, in one read: documents, or
// stored messages (as the original, a search serves both kinds of
// collection; a message has no updated_at). found[i] is false for a key
// deleted since it was indexed.
func (ps *pageSearch) fetch(ctx context.Context, tx kv.Tx, keys [][]byte) (hits []SearchHit, found []bool, err error) {
	hits = make([]SearchHit, len(keys))
	if ps.coll.Schema.CollectionType() == schema.Messages {
		items, found, err := ps.o.messages.FetchMany(ctx, tx, keys)
		for i, m := range items {
			hits[i] = SearchHit{Data: m.Data, CreatedAt: m.CreatedAt}
		}
		return hits, found, err
	}
	recs, found, err := ps.o.docs.FetchMany(ctx, tx, ps.coll, keys, ps.docBuf)
	for i, rec := range recs {
		hits[i] = SearchHit{Data: rec.Data, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	}
	return hits, found, err
}

// parseGroupBy reads the group_by of a search, {"fields":["city"],
// "limit":3}, the limit a number or a string holding one, and bounds the
// hits of a page of pageSize groups (0: the default page size).
func parseGroupBy(raw []byte, pageSize int) (*search.GroupBy, error) {
	if isNull(raw) {
		return nil, nil
	}
	var g struct {
		Fields []string    `json:"fields"`
		Limit  json.Number `json:"limit"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "group_by must be an object such as {\"fields\":[\"city\"],\"limit\":3}")
	}
	out := &search.GroupBy{Fields: g.Fields}
	if g.Limit != "" {
		limit, err := g.Limit.Int64()
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "group_by limit must be an integer, got %s", g.Limit)
		}
		out.Limit = int(max(min(limit, 1<<31-1), -1<<31))
	}
	hits := out.Limit
	if hits <= 0 || hits > search.MaxGroupHits {
		hits = search.DefaultGroupHits // refused by the search's own check if out of range
	}
	if pageSize == 0 {
		pageSize = DefaultSearchPageSize
	}
	if int64(pageSize)*int64(hits) > MaxGroupedPageHits {
		return nil, apierror.Errorf(apierror.InvalidArgument, "page_size %d of groups of up to %d hits is %d hits, above the %d a grouped page holds", pageSize, hits, pageSize*hits, MaxGroupedPageHits)
	}
	return out, nil
}

func fieldSet(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// prepareNearest checks a vector search (req.Vector) against the
// collection's schema and what else the request asks: its hits are
// ordered by distance, so it takes no words to rank by, no sort and no
// groups.
func prepareNearest(coll *catalog.Collection, req SearchRequest, sreq search.Request) (*search.VectorQuery, error) {
	q, err := search.PrepareVector(coll.Schema, req.Vector)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(req.Q) != "" && req.Q != "*":
		return nil, apierror.Errorf(apierror.InvalidArgument, "a vector search takes no q: its hits are ordered by their distance to the query vector (use a filter to narrow them)")
	case len(sreq.Sort) > 0:
		return nil, apierror.Errorf(apierror.InvalidArgument, "a vector search takes no sort: its hits are ordered by their distance to the query vector")
	case sreq.GroupBy != nil:
		return nil, apierror.Errorf(apierror.InvalidArgument, "a vector search takes no group_by")
	}
	return q, nil
}

// nearestK is how many neighbours a vector search takes: its top_k, or
// else as many as the page asked for reaches (one page when none is).
func nearestK(q *search.VectorQuery, req SearchRequest) int {
	if q.TopK > 0 {
		return q.TopK
	}
	return min(max(req.Page, 1)*req.PageSize, search.MaxTopK)
}

// readNearest serves page n of a vector search's neighbours, each hit
// with its distance; the facets count the filter's matches.
func (sp *searchPages) readNearest(ctx context.Context, n int, withFacets bool) (SearchPage, int, error) {
	size := sp.pageSize
	found := int64(len(sp.nearest))
	page := SearchPage{Hits: []SearchHit{}, Facets: map[string]search.FacetResult{}, Found: found, Page: int32(n), Size: int32(size),
		TotalPages: int32((found + int64(size) - 1) / int64(size))}
	if withFacets && len(sp.prepared.Facets) > 0 {
		res, err := sp.searcher.Page(ctx, sp.prepared, 0, 0, true)
		if err != nil {
			return SearchPage{}, 0, err
		}
		if res.Facets != nil {
			page.Facets = res.Facets
		}
	}
	from := min((n-1)*size, len(sp.nearest))
	on := sp.nearest[from:min(from+size, len(sp.nearest))]
	keys := make([][]byte, len(on))
	for i, h := range on {
		keys[i] = h.Key
	}
	hits, found2, err := sp.fetch(ctx, keys)
	if err != nil {
		return SearchPage{}, 0, err
	}
	for i := range hits {
		if !found2[i] {
			continue // deleted since it was indexed
		}
		d := float64(on[i].Distance)
		hits[i].VectorDistance = &d
		switch ok, err := sp.keep(&hits[i]); {
		case err != nil:
			return SearchPage{}, 0, err
		case ok:
			page.Hits = append(page.Hits, hits[i])
		}
	}
	return page, len(on), nil
}
