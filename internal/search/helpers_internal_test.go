package search

import (
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

// newSearcher searches idx, from cols (nil: through Bleve alone).
func newSearcher(idx bleve.Index, cols *engine.Columns) *Searcher {
	return &Searcher{engine: engine.Searcher{Index: idx, Columns: cols, ColumnsIndex: 1}}
}

// newTestIndex parses a schema and creates an empty index for it on disk,
// closed when the test ends, with the analyzers documents are built with.
func newTestIndex(tb testing.TB, schemaJSON string) (*schema.Schema, bleve.Index, fields.Analyzers) {
	return newTestIndexIn(tb, schemaJSON, tb.TempDir()+"/1")
}

// newTestIndexIn is newTestIndex in dir; in memory if dir is empty (no
// persister and no merger: each batch stays a segment of its own).
func newTestIndexIn(tb testing.TB, schemaJSON, dir string) (*schema.Schema, bleve.Index, fields.Analyzers) {
	tb.Helper()
	s, err := schema.Parse("docs", []byte(schemaJSON))
	if err != nil {
		tb.Fatal(err)
	}
	ix := &Indexer{}
	idx, err := ix.create(&collIndex{id: 1, db: "db", name: "docs", dir: dir}, 1)
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
