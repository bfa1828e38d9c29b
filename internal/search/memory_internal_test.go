package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// A read asks for what the batch has room for, in entries and, at the
// last read's mean entry size, in bytes; never fewer than one entry.
func TestReadLimit(t *testing.T) {
	ix := &Indexer{opts: Options{BatchEntries: 256, BatchBytes: 1000}}
	for _, tc := range []struct{ mean, n, size, want int }{
		{0, 0, 0, 256},     // nothing read yet: the entry bound alone
		{0, 250, 0, 6},     // entries without data
		{100, 0, 0, 10},    // 10 entries of 100 bytes fill 1000
		{100, 0, 950, 1},   // room for half an entry: one
		{4, 250, 0, 6},     // the entry bound is the lower
		{5000, 0, 0, 1},    // large entries: one at a time
		{100, 200, 500, 5}, // 500 bytes left
	} {
		ix.entryBytes = tc.mean
		if got := ix.readLimit(tc.n, tc.size); got != tc.want {
			t.Errorf("mean %d, %d entries of %d bytes gathered: read %d, want %d", tc.mean, tc.n, tc.size, got, tc.want)
		}
	}
}

// Every index is created with the settings that bound its memory, kept in
// its meta file, and the merge plan among them is one Bleve accepts.
func TestIndexesHoldTheirScorchSettings(t *testing.T) {
	ix := &Indexer{}
	ci := &collIndex{id: 3, db: "db", name: "c", dir: filepath.Join(t.TempDir(), "3")}
	idx, err := ix.create(ci, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.(*boundedIndex); !ok {
		t.Errorf("an index on disk is a %T, want its unpersisted batches bounded", idx)
	}
	idx.Close()
	raw, err := os.ReadFile(filepath.Join(ci.dir, "index_meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Config struct {
			UnsafeBatch        *bool           `json:"unsafe_batch"`
			NumSnapshotsToKeep int             `json:"numSnapshotsToKeep"`
			Merge              json.RawMessage `json:"scorchMergePlanOptions"`
			Persister          struct {
				NumPersisterWorkers int
			} `json:"scorchPersisterOptions"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	c := meta.Config
	if c.UnsafeBatch == nil || !*c.UnsafeBatch || c.NumSnapshotsToKeep != 1 || c.Persister.NumPersisterWorkers != 1 {
		t.Errorf("index meta config: %s", raw)
	}
	plan := mergeplan.DefaultMergePlanOptions
	if err := json.Unmarshal(c.Merge, &plan); err != nil {
		t.Fatal(err)
	}
	if err := mergeplan.ValidateMergePlannerOptions(&plan); err != nil || plan.MaxSegmentSize != MergeMaxSegmentDocs || plan.SegmentsPerMergeTask != 10 {
		t.Errorf("merge plan %+v: %v", plan, err)
	}
	if err := ix.open(ci); err != nil {
		t.Fatalf("open with the settings: %v", err)
	}
	ci.idx.Close()
}
