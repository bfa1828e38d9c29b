package archtest

import (
	"strings"
	"testing"
)

// vectorIndex is the approximate-nearest-neighbour index (issue 37): a
// structure the search indexer owns, one per vector field, that knows
// vectors and keys and nothing of Folio's documents, schemas or stores,
// so that it is measured, fuzzed and replaced on its own.
const vectorIndex = "internal/vector"

func TestVectorIndexImportsNothingOfFolios(t *testing.T) {
	imports := packageImports(t)
	imps, ok := imports[vectorIndex]
	if !ok {
		t.Fatalf("no package %s: the rule is out of date", vectorIndex)
	}
	for _, imp := range imps {
		if strings.HasPrefix(imp, module) {
			t.Errorf("%s imports %s: it imports nothing of Folio's", vectorIndex, imp)
		}
	}
}
