package clienttest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/npmtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
)

// TestFinalSearchClients runs the final TypeScript clients' search, unchanged,
// against a real `folio serve` on each engine: tsfinal/search.js, an
// application of @tigrisdata/core 1.3.0's search indexes (every document
// call, words, filters, facets, sorts, pages, groups) and of
// @tigrisdata/vector 1.1.0's vector store (nearest neighbours with and
// without a filter).
func TestFinalSearchClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio, installs an npm package: not in -short")
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not on PATH: the final TypeScript clients' search is not tested")
	}
	modules := filepath.Join(npmtest.Install(t, tsFinal), "node_modules")
	flow, err := filepath.Abs(filepath.Join("tsfinal", "search.js"))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := servetest.Start(t, servetest.Options{Backend: b, Args: []string{"--log-requests"}})
		runTSFlow(t, s, nodeBin, modules, flow, "search_ts", 16)
	})
}
