package ops

import (
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/search"
)

// A describe request's SchemaFormat is parsed in ops, so that every
// transport answers an unknown format with the same INVALID_ARGUMENT.
func TestSchemaFormats(t *testing.T) {
	for _, list := range []string{"", " "} {
		if got, err := schemaFormats(list); got != nil || err != nil {
			t.Errorf("schemaFormats(%q) = %v, %v; want nothing asked for", list, got, err)
		}
	}
	got, err := schemaFormats("go, TS")
	if err != nil || len(got) != 2 || got[0].Key != "go" || got[1].Key != "TS" {
		t.Errorf(`schemaFormats("go, TS") = %v, %v`, got, err)
	}
	for list, msg := range map[string]string{
		"xml":   "unsupported schema format 'xml'. supported formats are: go, ts, java",
		"go,,":  "unsupported schema format ''. supported formats are: go, ts, java",
		"go,rs": "unsupported schema format 'rs'. supported formats are: go, ts, java",
	} {
		_, err := schemaFormats(list)
		if e, ok := apierror.From(err); !ok || e.Code != apierror.InvalidArgument || e.Message != msg {
			t.Errorf("schemaFormats(%q) error %v, want INVALID_ARGUMENT %q", list, err, msg)
		}
	}
}

// A collection can be searched whenever the server runs its search
// indexer, whatever its schema marks: Folio searches every string field.
func TestSearchStatus(t *testing.T) {
	if got := (&Ops{}).searchStatus(); got != NoSearchIndex {
		t.Errorf("without a search indexer: %q, want %q", got, NoSearchIndex)
	}
	if got := (&Ops{search: &search.Indexer{}}).searchStatus(); got != SearchActive {
		t.Errorf("with a search indexer: %q, want %q", got, SearchActive)
	}
}
