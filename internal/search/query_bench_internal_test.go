package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

// BenchmarkQueryKinds runs the query kinds of bench/cmd/searchcompare on an
// index of 20,000 documents written in batches of 250 (as the indexer
// writes them under a steady load), against Bleve alone: what a search
// costs below ops and HTTP. The index's segments are merged as the merge
// plan says, after a pause for the merger.
func BenchmarkQueryKinds(b *testing.B) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},"body":{"type":"string"},`+
		`"tag":{"type":"string"},"rank":{"type":"integer"},"size":{"type":"number"}},"primary_key":["id"]}`))
	if err != nil {
		b.Fatal(err)
	}
	ix := &Indexer{}
	ci := &collIndex{id: 1, db: "db", name: "docs", dir: b.TempDir() + "/1"}
	idx, err := ix.create(ci, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	an, _ := ix.analyzers()
	words := []string{"bako", "tila", "zorp", "mube", "kira", "lofe", "sanu", "pedi", "gola", "vemi", "rupa", "dosi"}
	const n = 20_000
	for start := 0; start < n; start += 250 {
		batch := idx.NewBatch()
		for i := start; i < start+250; i++ {
			body := ""
			prev := ""
			for w := range 80 {
				// Word w of document i: frequent words often, the rest
				// rarely; in every third document "bako" is followed by
				// "tila", the phrase kind's phrase.
				k := (i*31 + w*17) % 97
				switch {
				case prev == words[0] && i%3 == 0:
					prev = words[1]
				case k < len(words):
					prev = words[k]
				default:
					prev = fmt.Sprintf("w%d", (i*7+w*13)%5000)
				}
				body += prev + " "
			}
			data := fmt.Sprintf(`{"id":%d,"title":"t%d %s","body":%q,"tag":"tag%d","rank":%d,"size":%g}`, i, i, words[i%len(words)], body, i%10, 1+i%5, float64(i%10000)/10)
			d, err := fields.BuildDocument([]byte(fmt.Sprintf("k%08d", i)), []byte(data), s, an)
			if err != nil {
				b.Fatal(err)
			}
			batch.IndexAdvanced(d)
		}
		if err := idx.Batch(batch); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(5 * time.Second) // the merger's turn
	searcher := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	ii, _ := idx.Advanced()
	r, _ := ii.Reader()
	b.Logf("%d segments", segments(r))
	r.Close()
	parse := func(raw string) filter.Filter {
		if raw == "" {
			return filter.Filter{}
		}
		f, err := filter.Parse([]byte(raw), s, filter.Collation{})
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	for _, k := range []struct {
		name, q, filter string
		facets          bool
		sort            bool
		from            int
		group           []string
	}{
		{name: "rare", q: "w4321"},
		{name: "common", q: "bako"},
		{name: "phrase", q: `"bako tila"`},
		{name: "filter", filter: `{"$and":[{"tag":"tag3"},{"size":{"$gte":300,"$lt":600}}]}`},
		{name: "facets", q: "tila", filter: `{"size":{"$gte":300,"$lt":600}}`, facets: true, sort: true},
		{name: "deep", q: "bako", from: 1000},
		// common's matches grouped: by a field of 10 values, and of one
		// value a document (every match its own group: two passes).
		{name: "group-tag", q: "bako", group: []string{"tag"}},
		{name: "group-id", q: "bako", group: []string{"id"}},
	} {
		req := Request{Q: k.q, Filter: parse(k.filter)}
		if k.group != nil {
			req.GroupBy = &GroupBy{Fields: k.group}
		}
		if k.facets {
			req.Facets = map[string]int{"tag": 10, "rank": 10, "size": 10}
		}
		if k.sort {
			req.Sort = []SortField{{Path: "size", Desc: true}}
		}
		p, err := Prepare(s, req)
		if err != nil {
			b.Fatal(err)
		}
		run := func(name string, p *Prepared) {
			b.Run(name, func(b *testing.B) {
				var found uint64
				for range b.N {
					res, err := searcher.Page(context.Background(), p, k.from, 20, k.facets)
					if err != nil {
						b.Fatal(err)
					}
					found = res.Found
				}
				b.ReportMetric(float64(found), "found")
			})
		}
		run(k.name, p)
		if k.name == "phrase" {
			// The same phrase through Bleve's own match-phrase query, which
			// phraseQuery replaced.
			mq := bleve.NewMatchPhraseQuery(strings.Trim(k.q, `"`))
			mq.SetField("body")
			mq.Analyzer = "standard"
			ours := *p
			ours.Query = engine.NewPhraseQuery(strings.Trim(k.q, `"`), "body", an.Text)
			theirs := *p
			theirs.Query = mq
			run("phrase-body-folio", &ours)
			run("phrase-body-bleve", &theirs)
		}
	}
}

func segments(r any) int {
	if s, ok := r.(interface {
		Segments() []*scorch.SegmentSnapshot
	}); ok {
		return len(s.Segments())
	}
	return -1
}
