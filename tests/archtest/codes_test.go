package archtest

import (
	"slices"
	"strings"
	"testing"
)

// Where API codes are made (docs/architecture.md, "Where errors get their
// codes"). The storage layers hold no request and cannot say what went
// wrong with one: they return plain errors, or sentinels the callers test
// with errors.Is, and the operations give them their codes in one place
// (ops.apiError). The packages above them that read a request (its
// names, schema, filter, documents, credentials, transaction) may make an
// error with its code for the mistake they find, with the message only
// they can write; the transports map codes to their wire.
//
// storageLayers are the packages below those that read requests: the kv
// interface with its backends (every package under internal/kv), the
// tuple encoding and the key layout, the index entries, the change log,
// the cluster registry and backups.
var storageLayers = []string{"internal/kv", "internal/keyenc", "internal/keyspace", "internal/index", "internal/changelog", "internal/cluster", "internal/backup"}

// apiCodes is the package of the API's error model.
const apiCodes = "internal/apierror"

func TestStorageLayersMakeNoAPICodes(t *testing.T) {
	imports := packageImports(t)
	for _, layer := range storageLayers {
		if _, ok := imports[layer]; !ok {
			t.Fatalf("no package %s: the list of storage layers is out of date", layer)
		}
	}
	for pkg, imps := range imports {
		if !slices.ContainsFunc(storageLayers, func(layer string) bool { return pkg == layer || strings.HasPrefix(pkg, layer+"/") }) {
			continue
		}
		if slices.Contains(imps, module+apiCodes) {
			t.Errorf("%s imports %s: a storage layer makes no API codes; return a plain or sentinel error and give it its code in ops.apiError", pkg, apiCodes)
		}
	}
}
