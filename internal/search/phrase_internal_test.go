package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/foliodb/folio/internal/schema"
)

// TestPhraseMatchesBleve: Folio's phrase query finds the same documents
// with the same scores as Bleve's match-phrase query, on random texts of a
// small vocabulary (so words repeat and phrases often almost match),
// with stop words inside phrases, repeated words, and arrays, whose
// elements a phrase must not straddle.
func TestPhraseMatchesBleve(t *testing.T) {
	s, idx, an := newTestIndex(t, `{"title":"docs","properties":{"id":{"type":"integer"},"body":{"type":"string"},`+
		`"lines":{"type":"array","items":{"type":"string"}}},"primary_key":["id"]}`)
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"red", "fox", "jumps", "over", "lazy", "dog", "the", "of", "a", "quick", "brown", "red"}
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	var texts []string
	for start := 0; start < 600; start += 100 { // several segments
		b := idx.NewBatch()
		for i := start; i < start+100; i++ {
			body := text(3 + rng.IntN(40))
			lines := []string{text(1 + rng.IntN(3)), text(1 + rng.IntN(3)), text(1 + rng.IntN(3))}
			texts = append(texts, body)
			data := fmt.Sprintf(`{"id":%d,"body":%q,"lines":[%q,%q,%q]}`, i, body, lines[0], lines[1], lines[2])
			d, err := buildDocument([]byte(fmt.Sprintf("k%04d", i)), []byte(data), s, an)
			if err != nil {
				t.Fatal(err)
			}
			b.IndexAdvanced(d)
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	phrases := []string{"red fox", "fox red", "red red", "the lazy dog", "over the lazy", "quick of brown", "dog dog dog", "red fox jumps over", "a the of", "brown"}
	for range 60 { // pieces of indexed texts, which surely match somewhere
		w := strings.Fields(texts[rng.IntN(len(texts))])
		i := rng.IntN(len(w))
		j := min(len(w), i+1+rng.IntN(4))
		phrases = append(phrases, strings.Join(w[i:j], " "))
	}
	unscored := false
	search := func(q query.Query) *bleve.SearchResult {
		req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		if unscored {
			req.SortBy([]string{"_id"})
			req.Score = "none"
		}
		res, err := idx.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	matched := 0
	for _, text := range phrases {
		for _, field := range []string{"body", "lines"} {
			ours := newPhraseQuery(text, field, an.text)
			if ours == nil {
				continue // only stop words
			}
			theirs := bleve.NewMatchPhraseQuery(text)
			theirs.SetField(field)
			theirs.Analyzer = "standard"
			var got, want *bleve.SearchResult
			switch k := len(text) % 3; {
			case k == 0: // as it is
				unscored = false
				got, want = search(ours), search(theirs)
			case k == 1: // beside a word, which makes the conjunction Advance the phrase
				unscored = false
				word := bleve.NewTermQuery("dog")
				word.SetField(field)
				got, want = search(bleve.NewConjunctionQuery(word, ours)), search(bleve.NewConjunctionQuery(word, theirs))
			default: // unscored, as under a sort
				unscored = true
				got, want = search(ours), search(theirs)
			}
			if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
				t.Errorf("%q in %s: %d matches, Bleve %d", text, field, got.Total, want.Total)
				continue
			}
			matched += len(got.Hits)
			for k := range got.Hits {
				g, w := got.Hits[k], want.Hits[k]
				if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-9 {
					t.Errorf("%q in %s: hit %d is %s (%g), Bleve's %s (%g)", text, field, k, g.ID, g.Score, w.ID, w.Score)
					break
				}
			}
		}
	}
	if matched < 100 {
		t.Fatalf("the phrases matched %d documents in all: too few to compare", matched)
	}
}

// newTestIndex parses a schema and creates an empty index for it on disk,
// closed when the test ends, with the analyzers documents are built with.
func newTestIndex(tb testing.TB, schemaJSON string) (*schema.Schema, bleve.Index, analyzers) {
	tb.Helper()
	s, err := schema.Parse("docs", []byte(schemaJSON))
	if err != nil {
		tb.Fatal(err)
	}
	ix := &Indexer{}
	idx, err := ix.create(&collIndex{id: 1, db: "db", name: "docs", dir: tb.TempDir() + "/1"}, 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { idx.Close() })
	an, err := ix.analyzers()
	if err != nil {
		tb.Fatal(err)
	}
	return s, idx, an
}
