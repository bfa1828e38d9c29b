package kv_test

import (
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// TestConformance runs the conformance suite on the embedded store from
// this package too. The transaction layer both backends share (NewTx: the
// write buffer, read-your-writes, read ranges and limits; the merged
// ranges; Run's retries) lives here, and mutation testing runs only a
// package's own tests for its mutants: without this run, kv's mutants
// would all be "not covered". The backends' packages run the same suite,
// PostgreSQL's included.
func TestConformance(t *testing.T) {
	kvtest.Run(t, kvtest.Harness{New: func(t *testing.T) kv.Store {
		s, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}})
}
