package translate

import (
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

// BenchmarkPrepare: checking and translating a request, which every
// search does before it reads the index.
func BenchmarkPrepare(b *testing.B) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},"body":{"type":"string"}},"primary_key":["id"]}`))
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if _, err := Prepare(s, Request{Q: `rare "a phrase"`}); err != nil {
			b.Fatal(err)
		}
	}
}
