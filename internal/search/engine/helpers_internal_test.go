package engine

import (
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/fields"
)

// newTestIndex parses a schema and creates an empty index for it on disk,
// closed when the test ends, with the analyzers documents are built with.
func newTestIndex(tb testing.TB, schemaJSON string) (*schema.Schema, bleve.Index, fields.Analyzers) {
	return newTestIndexIn(tb, schemaJSON, tb.TempDir()+"/1")
}

// newTestIndexIn is newTestIndex in dir; in memory if dir is empty (no
// persister and no merger: each batch stays a segment of its own). The
// index is a scorch index mapped as the indexer maps its own (BM25, no
// dynamic fields: documents come built by fields.BuildDocument).
func newTestIndexIn(tb testing.TB, schemaJSON, dir string) (*schema.Schema, bleve.Index, fields.Analyzers) {
	tb.Helper()
	s, err := schema.Parse("docs", []byte(schemaJSON))
	if err != nil {
		tb.Fatal(err)
	}
	m := bleve.NewIndexMapping()
	m.ScoringModel = bindex.BM25Scoring
	m.DefaultMapping = bleve.NewDocumentDisabledMapping()
	idx, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { idx.Close() })
	an, err := fields.SharedAnalyzers()
	if err != nil {
		tb.Fatal(err)
	}
	return s, idx, an
}

// addDocument builds the document data of key as the indexer does and
// adds it to b.
func addDocument(tb testing.TB, b *bleve.Batch, s *schema.Schema, an fields.Analyzers, key, data []byte) {
	tb.Helper()
	d, err := fields.BuildDocument(key, data, s, an)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.IndexAdvanced(d); err != nil {
		tb.Fatal(err)
	}
}
