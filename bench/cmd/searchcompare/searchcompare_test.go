package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/node"
)

// The generated corpus is the same for a seed, of the promised shape, and
// its words are ones every engine splits out alike.
func TestGenerate(t *testing.T) {
	a, b := generate(500, 7), generate(500, 7)
	if !slices.Equal(a, b) {
		t.Fatal("two corpora of one seed differ")
	}
	if c := generate(500, 8); slices.Equal(a, c) {
		t.Fatal("two seeds gave one corpus")
	}
	for i, d := range a {
		if d.ID != int64(i+1) || d.Rank < 1 || d.Rank > 5 || d.Size < 0 || d.Size > 1000 || !strings.HasPrefix(d.Tag, "tag") || !strings.HasPrefix(d.Source, "source") {
			t.Fatalf("document %d: %+v", i, d)
		}
		words := strings.Fields(d.Title + " " + d.Body)
		if n := len(strings.Fields(d.Title)); n < 4 || n > 9 {
			t.Fatalf("title of %d words", n)
		}
		for _, w := range words {
			if _, clean := cleanWord(w); !clean || isStopWord(w) {
				t.Fatalf("word %q of document %d is not clean", w, d.ID)
			}
		}
	}
}

// The picked terms have the document frequencies they are said to have,
// counted here by brute force, and hit their targets on a corpus large
// enough to have such words.
func TestPickTerms(t *testing.T) {
	docs := generate(3000, 1)
	tm := pickTerms(docs)
	count := func(match func(words []string) bool) int {
		n := 0
		for _, d := range docs {
			if match(strings.Fields(d.Title)) || match(strings.Fields(d.Body)) {
				n++
			}
		}
		return n
	}
	has := func(w string) func([]string) bool {
		return func(words []string) bool { return slices.Contains(words, w) }
	}
	for _, c := range []struct {
		word   string
		df     int
		lo, hi int
	}{
		{tm.Rare, tm.RareDF, 3, 8},
		{tm.Common, tm.CommonDF, 700, 1100},
		{tm.Medium, tm.MediumDF, 200, 400},
	} {
		if got := count(has(c.word)); got != c.df || got < c.lo || got > c.hi {
			t.Errorf("%q: in %d documents, said %d, want within [%d, %d]", c.word, got, c.df, c.lo, c.hi)
		}
	}
	phrase := count(func(words []string) bool {
		for i := 1; i < len(words); i++ {
			if words[i-1] == tm.Phrase[0] && words[i] == tm.Phrase[1] {
				return true
			}
		}
		return false
	})
	if phrase != tm.PhraseDF || phrase < 20 || phrase > 120 {
		t.Errorf("phrase %v: in %d documents, said %d, want about 60", tm.Phrase, phrase, tm.PhraseDF)
	}
	inRange, tagged := 0, 0
	for _, d := range docs {
		if d.Size >= tm.SizeLo && d.Size < tm.SizeHi {
			inRange++
		}
		if d.Tag == tm.FilterTag {
			tagged++
		}
	}
	if inRange < 850 || inRange > 950 || tagged < 150 || tagged > 450 {
		t.Errorf("size range holds %d documents, tag %d", inRange, tagged)
	}
	if tm.DeepOffset%pageSize != 0 || tm.DeepOffset <= 0 || tm.DeepOffset >= tm.CommonDF {
		t.Errorf("deep offset %d for %d hits", tm.DeepOffset, tm.CommonDF)
	}
}

// A word glued to other characters anywhere is no candidate: the engines
// split such text differently.
func TestCandidatesLeaveOutGluedWords(t *testing.T) {
	docs := []doc{
		{Title: "Python rocks.", Body: "see python.org and the python docs, (python) now"},
		{Title: "rocks", Body: "rocks don't roll; x86 rocks"},
	}
	ws := countWords(docs)
	got := ws.candidates()
	if !slices.Equal(got, []string{"rocks", "docs", "roll"}) { // "see", "now": too short; "and", "the": stop words
		t.Errorf("candidates %v", got)
	}
	if slices.Contains(got, "python") || slices.Contains(got, "don") {
		t.Errorf("glued words among the candidates: %v", got)
	}
	if ws.df["rocks"] != 2 {
		t.Errorf("rocks in %d documents, want 2", ws.df["rocks"])
	}
}

func TestParseMail(t *testing.T) {
	raw := "From someone@example.com  Thu Aug 22 12:36:23 2002\n" +
		"Return-Path: <x@y.z>\n" +
		"From: \"Ann Example\" <Ann@Mail.Example.COM>\n" +
		"Subject: Re: a folded\n subject line\n" +
		"Date: Thu, 22 Aug 2002 07:36:16 -0400\n" +
		"\n" +
		"Hello,\n\nthe body.\n"
	d := parseMail("easy-ham-1", raw)
	if d.Title != "Re: a folded subject line" || d.Source != "mail.example.com" || d.Rank != 11 || d.Tag != "easy-ham-1" ||
		d.Body != "Hello,\n\nthe body.\n" || d.Size != float64(len(raw)) {
		t.Errorf("%+v", d)
	}
	// No subject, an unparsable sender and date, a body past the bound.
	d = parseMail("spam-1", "From: <broken@\nDate: someday\n\n"+strings.Repeat("é", maxBody))
	if d.Title != "" || d.Source != "unknown" && d.Source != "" || d.Rank != 0 || len(d.Body) > maxBody || !strings.HasPrefix(d.Body, "é") {
		t.Errorf("%+v", d.Title)
	}
}

func TestBatches(t *testing.T) {
	docs := make([]doc, 10)
	for i := range docs {
		docs[i] = doc{ID: int64(i), Body: strings.Repeat("x", 100)}
	}
	sizes := func(bs [][]doc) []int {
		var out []int
		for _, b := range bs {
			out = append(out, len(b))
		}
		return out
	}
	if got := sizes(batches(docs, 4, 1<<20)); !slices.Equal(got, []int{4, 4, 2}) {
		t.Errorf("by count: %v", got)
	}
	if got := sizes(batches(docs, 100, 400)); !slices.Equal(got, []int{2, 2, 2, 2, 2}) {
		t.Errorf("by bytes: %v", got)
	}
	docs[3].Body = strings.Repeat("x", 10_000)
	if got := sizes(batches(docs, 100, 400)); !slices.Equal(got, []int{2, 1, 1, 2, 2, 2}) {
		t.Errorf("a large document alone: %v", got)
	}
}

// Each engine's rendering of the query kinds: the same question asked in
// its language.
func TestQueriesPerEngine(t *testing.T) {
	tm := terms{Rare: "zorp", Common: "bako", Medium: "tila", Phrase: [2]string{"bako", "tila"}, FilterTag: "tag03", SizeLo: 10, SizeHi: 20, DeepOffset: 400}
	qs := queries(tm)
	want := map[string]struct{ folio, sqlitePage, pgPage string }{
		"rare": {`{"page":1,"page_size":20,"q":"zorp","search_fields":["title","body"]}`,
			`FROM (SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 20 OFFSET 0) r JOIN docs d ON d.id = r.rowid ORDER BY r.rank`,
			`FROM docs d, plainto_tsquery('simple', $1) AS query WHERE d.tsv @@ query ORDER BY ts_rank_cd(d.tsv, query) DESC, d.id LIMIT 20 OFFSET 0`},
		"phrase": {`{"page":1,"page_size":20,"q":"\"bako tila\"","search_fields":["title","body"]}`,
			`WHERE fts MATCH ? ORDER BY rank`, `phraseto_tsquery('simple', $1)`},
		"filter": {`{"filter":{"$and":[{"tag":"tag03"},{"size":{"$gte":10,"$lt":20}}]},"page":1,"page_size":20}`,
			`FROM docs d WHERE d.tag = ? AND d.size >= ? AND d.size < ? ORDER BY d.id LIMIT 20 OFFSET 0`,
			`FROM docs d WHERE d.tag = $1 AND d.size >= $2 AND d.size < $3 ORDER BY d.id LIMIT 20`},
		"facets": {`{"facet":{"rank":{"size":10},"source":{"size":10},"tag":{"size":10}},"filter":{"size":{"$gte":10,"$lt":20}},"page":1,"page_size":20,"q":"tila","search_fields":["title","body"],"sort":[{"size":"$desc"}]}`,
			`FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ? AND d.size >= ? AND d.size < ? ORDER BY d.size DESC, d.id LIMIT 20`,
			`WHERE d.tsv @@ query AND d.size >= $2 AND d.size < $3 ORDER BY d.size DESC, d.id LIMIT 20`},
		"deep": {`{"page":21,"page_size":20,"q":"bako","search_fields":["title","body"]}`, `LIMIT 20 OFFSET 400`, `LIMIT 20 OFFSET 400`},
	}
	for _, q := range qs {
		w, ok := want[q.kind]
		if !ok {
			continue
		}
		body, err := folioRequest(q)
		if err != nil || string(body) != w.folio {
			t.Errorf("%s: folio %s (%v), want %s", q.kind, body, err, w.folio)
		}
		page, count, facets := sqliteQueries(q)
		if !strings.Contains(page, w.sqlitePage) {
			t.Errorf("%s: sqlite %s, want it to hold %s", q.kind, page, w.sqlitePage)
		}
		_, args := sqliteWhere(q)
		if strings.Count(page, "?") != len(args) || strings.Count(count, "?") != len(args) {
			t.Errorf("%s: sqlite placeholders %q / %q for %d args", q.kind, page, count, len(args))
		}
		pgPage, pgCount, pgFacets, pgArgs := pgQueries(q)
		if !strings.Contains(pgPage, w.pgPage) {
			t.Errorf("%s: postgres %s, want it to hold %s", q.kind, pgPage, w.pgPage)
		}
		if strings.Contains(pgCount, fmt.Sprintf("$%d", len(pgArgs)+1)) {
			t.Errorf("%s: postgres count %s has more placeholders than %d args", q.kind, pgCount, len(pgArgs))
		}
		if (len(facets) == 3) != q.facets || (len(pgFacets) == 3) != q.facets {
			t.Errorf("%s: %d and %d facet statements", q.kind, len(facets), len(pgFacets))
		}
	}
	if m := ftsMatch(query{words: []string{"a", "b"}}); m != `"a" "b"` {
		t.Errorf("fts words %s", m)
	}
}

func TestParseFolioPage(t *testing.T) {
	line := `{"result":{"hits":[{"data":{"id":42,"title":"x"},"metadata":{}},{"data":{"id":7},"metadata":{}}],` +
		`"facets":{"tag":{"counts":[{"count":5,"value":"tag01"}],"stats":{"count":9}},"source":{"counts":[{"count":3,"value":"s"}],"stats":{"count":9}},` +
		`"rank":{"counts":[],"stats":{"count":9,"sum":27,"avg":3,"min":1,"max":5}}},"meta":{"found":9,"total_pages":1,"page":{"current":1,"size":20}}}}` + "\n"
	o, err := parseFolioPage([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if o.found != 9 || o.hits != 2 || o.firstID != 42 || o.facets != "tag01=5 s=3 rank n=9 sum=27" {
		t.Errorf("%+v", o)
	}
	if _, err := parseFolioPage([]byte(`{"error":{"code":"UNAVAILABLE","message":"x"}}`)); err == nil {
		t.Error("an error line read as a page")
	}
}

func TestPercentile(t *testing.T) {
	var l latencies
	for i := 100; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	if l.percentile(50) != 50*time.Millisecond || l.percentile(99) != 99*time.Millisecond || l.percentile(100) != 100*time.Millisecond {
		t.Errorf("p50 %v p99 %v p100 %v", l.percentile(50), l.percentile(99), l.percentile(100))
	}
	if (latencies{}).percentile(50) != 0 || (latencies{3}).percentile(99) != 3 {
		t.Error("empty or single")
	}
	if s := letters(1209); s != "bcaj" {
		t.Errorf("letters(1209) = %s", s)
	}
}

// The report renders every engine's cell and ratio, and goes into its
// section of benchmarks.md without touching the hand-written rest.
func TestReport(t *testing.T) {
	r := &corpusResult{corpus: &corpus{name: "g", desc: "test corpus", docs: make([]doc, 1000)},
		engines: []string{folioFirst, baseline}, queries: queries(terms{Rare: "a", Common: "b", Medium: "c", Phrase: [2]string{"b", "c"}}),
		loadSeconds: map[string]float64{folioFirst: 4, baseline: 2},
		lat:         map[string]map[string]latencies{"rare": {folioFirst: {2 * time.Millisecond}, baseline: {time.Millisecond}}},
		out:         map[string]map[string]outcome{"rare": {folioFirst: {found: 5, firstID: 3}, baseline: {found: 5, firstID: 3}}},
		cts:         map[string]latencies{folioFirst: {30 * time.Millisecond}, baseline: {time.Millisecond}}}
	rows := r.rows()
	if len(rows) != 3 || rows[0].cells[0] != "250 docs/s" || rows[0].ratios[0] != "0.50" || rows[1].ratios[0] != "2.00" || rows[2].cells[0] != "30 ms / 30 ms" {
		t.Errorf("rows %+v", rows)
	}
	md := markdown(config{runs: 10, limit: time.Second, rounds: 1, batch: 500, loadClients: 4}, &environment{postgres: "15"}, []*corpusResult{r})
	for _, want := range []string{"| rare | a rare word | 2.0 ms / 2.0 ms | 1.0 ms / 1.0 ms | 2.00 | 2.00 |", "| rare | q a | 5, first 3 | 5, first 3 |", "test corpus"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	doc := "# Benchmarks\n\n<!-- issue 14: begin -->\n## Issue 14\nhand\n<!-- issue 14: end -->\n\nafter\n"
	out, err := issue14.Replace([]byte(doc), md)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); !strings.Contains(s, "hand\n"+issue14.GeneratedBegin+"\n") || !strings.HasSuffix(s, issue14.GeneratedEnd+"\n<!-- issue 14: end -->\n\nafter\n") {
		t.Errorf("section:\n%s", s)
	}
	var b strings.Builder
	if err := writeText(&b, []*corpusResult{r}); err != nil || !strings.Contains(b.String(), "rare") {
		t.Errorf("text: %v\n%s", err, b.String())
	}
}

// The floor server answers a request with the answer recorded for its
// body, byte for byte, and any other with 404.
func TestFloorHandler(t *testing.T) {
	srv := httptest.NewServer(floorHandler())
	defer srv.Close()
	from := &folioEngine{label: "recorded", base: srv.URL, coll: "/c", hc: srv.Client()}
	rec, _ := json.Marshal(floorRecord{Request: []byte(`{"q":"a"}`), Response: []byte("{\"result\":{\"hits\":[]}}\n")})
	if _, err := from.post(context.Background(), "/record", rec); err != nil {
		t.Fatal(err)
	}
	got, err := from.post(context.Background(), "/c/documents/search", []byte(`{"q":"a"}`))
	if err != nil || string(got) != "{\"result\":{\"hits\":[]}}\n" {
		t.Fatalf("recorded request: %q, %v", got, err)
	}
	if _, err := from.post(context.Background(), "/c/documents/search", []byte(`{"q":"b"}`)); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a request not recorded: %v", err)
	}
}

// The gRPC engine asks the same server the same questions as the HTTP
// engine, and reads the same answers.
func TestGRPCAnswersAsHTTP(t *testing.T) {
	store, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.Search.Dir = t.TempDir()
		nc.ShutdownTimeout = 10 * time.Second
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	f, err := newFolio(ctx, folioFirst, "http://"+n.Addr().String(), "bench_t")
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	docs := generate(2000, 5)
	if err := f.load(ctx, docs, 500, 2); err != nil {
		t.Fatal(err)
	}
	g, err := newGRPC(f, "bench_t")
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	for _, q := range queries(pickTerms(docs)) {
		want, err := f.search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.search(ctx, q)
		if err != nil {
			t.Fatalf("%s over gRPC: %v", q.kind, err)
		}
		if got != want || want.found == 0 || want.hits == 0 {
			t.Errorf("%s: over gRPC %+v, over HTTP %+v", q.kind, got, want)
		}
		if q.facets && want.facets == "" {
			t.Errorf("%s: no facets", q.kind)
		}
	}
}

// stubEngine answers every search after its delay, and records the order
// of the searches across engines.
type stubEngine struct {
	label string
	delay time.Duration
	order *[]string
}

func (s *stubEngine) close()                                      {}
func (s *stubEngine) name() string                                { return s.label }
func (s *stubEngine) load(context.Context, []doc, int, int) error { return nil }
func (s *stubEngine) insert(context.Context, doc) error           { return nil }
func (s *stubEngine) search(context.Context, query) (outcome, error) {
	*s.order = append(*s.order, s.label)
	time.Sleep(s.delay)
	return outcome{found: 1}, nil
}

// The engines take turns, query by query, each starting turn from the
// next; an engine over its time stops after the least runs, the others
// go on to theirs.
func TestMeasureInterleaved(t *testing.T) {
	var order []string
	fast1 := &stubEngine{label: "a", order: &order}
	fast2 := &stubEngine{label: "b", order: &order}
	slow := &stubEngine{label: "slow", delay: 20 * time.Millisecond, order: &order}
	lat, out, err := measureInterleaved(context.Background(), []engine{fast1, fast2, slow}, query{kind: "rare"}, 12, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat["a"]) != 12 || len(lat["b"]) != 12 || len(lat["slow"]) != 5 {
		t.Fatalf("runs: a %d, b %d, slow %d; want 12, 12 and the least, 5", len(lat["a"]), len(lat["b"]), len(lat["slow"]))
	}
	if out["slow"].found != 1 {
		t.Errorf("outcome %+v", out["slow"])
	}
	if got := strings.Join(order[:6], ","); got != "a,b,slow,b,slow,a" {
		t.Errorf("first two turns %s, want a,b,slow,b,slow,a", got)
	}
}
