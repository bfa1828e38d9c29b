package archtest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Search is one room with three below it (docs/architecture.md, "Search"):
// internal/search, the indexer that follows the change log and the names
// ops calls; fields, the layout of a document as Bleve fields;
// translate, a request checked and translated into a plan; and engine,
// the plan run over an index's segments. searchRooms is every Folio
// package each room below internal/search may import: the engine knows
// Bleve and the layout and nothing of schemas, stores or the API's
// errors; the layout knows nothing of queries; the translation does not
// reach the store or the log.
var searchRooms = map[string][]string{
	"internal/search/fields":    {"internal/index", "internal/schema"},
	"internal/search/engine":    {"internal/search/fields"},
	"internal/search/translate": {"internal/search/engine", "internal/search/fields", "internal/filter", "internal/index", "internal/schema", "internal/apierror"},
}

func TestSearchRoomsImportOnlyTheirOwn(t *testing.T) {
	imports := packageImports(t)
	for room, may := range searchRooms {
		if _, ok := imports[room]; !ok {
			t.Fatalf("no package %s: the search rooms are out of date", room)
		}
		for _, imp := range imports[room] {
			if rel, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(may, rel) {
				t.Errorf("%s imports %s: it may import only %v of Folio's packages", room, rel, may)
			}
		}
	}
	// The rooms are search's own: ops and the node call internal/search.
	for pkg, imps := range imports {
		if pkg == "internal/search" || strings.HasPrefix(pkg, "internal/search/") {
			continue
		}
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module); ok && strings.HasPrefix(rel, "internal/search/") {
				t.Errorf("%s imports %s: the rooms of search are reached through internal/search", pkg, rel)
			}
		}
	}
}

// bleveInternals are the packages of Bleve's internals the engine reads
// segments through: one file of the engine imports them (segments.go,
// whose assumptions bleve_internals_test.go checks against the Bleve
// go.mod pins). scorch itself is also Bleve's index type and its
// configuration, which the indexer (internal/search) names when it
// creates and configures an index.
var (
	bleveInternals     = []string{"github.com/blevesearch/scorch_segment_api", "github.com/blevesearch/zapx", "github.com/blevesearch/bleve/v2/index/scorch"}
	bleveInternalsDoor = "internal/search/engine/segments.go"
	scorchConfigured   = "internal/search"
)

func TestBleveInternalsHaveOneDoor(t *testing.T) {
	seen := false
	for file, imps := range fileImports(t) {
		for _, imp := range imps {
			for _, internal := range bleveInternals {
				if imp != internal && !strings.HasPrefix(imp, internal+"/") {
					continue
				}
				switch {
				case file == bleveInternalsDoor:
					seen = true
				case filepath.ToSlash(filepath.Dir(file)) == scorchConfigured && strings.HasPrefix(imp, "github.com/blevesearch/bleve/v2/index/scorch"):
					// creates scorch indexes and sets their merge plans
				default:
					t.Errorf("%s imports %s: only %s reaches into Bleve's internals (and %s names scorch to create and configure an index)", file, imp, bleveInternalsDoor, scorchConfigured)
				}
			}
		}
	}
	if !seen {
		t.Fatalf("%s imports none of %v: the rule is out of date", bleveInternalsDoor, bleveInternals)
	}
}
