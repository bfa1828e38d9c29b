package search

import (
	"context"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/foliodb/folio/internal/kv"
)

// Stats is a snapshot of the indexer, for metrics.
type Stats struct {
	// LogReaders is the change-log readers the indexer holds open.
	LogReaders int
	// Position is where the log reader has read to; LastPosition the
	// log's end when the snapshot was taken; LagPositions the difference.
	Position, LastPosition kv.Position
	LagPositions           uint64
	// LagSeconds is how long the reader has been behind the log's end:
	// zero when it is caught up, else the time since it last was.
	LagSeconds float64
	// NumberColumnBytes is the memory of the number columns.
	NumberColumnBytes int64
	Indexes           []IndexStats
}

// IndexStats describes one collection's index.
type IndexStats struct {
	DB, Collection string
	CollectionID   int64
	Ready          bool        // false while it is being rebuilt, and while dormant
	Dormant        bool        // no index: the collection was never searched
	Rebuilds       int         // rebuilds started since the indexer started
	Applied        kv.Position // its watermark in memory
	Documents      uint64
	DiskBytes      int64 // its directory's size; 0 in memory
	// Vectors is how many vectors its vector fields' graphs hold, and
	// VectorBytes their memory (vectors, links, keys).
	Vectors     int
	VectorBytes int64
}

// Stats reports the indexer's lag and its indexes' sizes. It walks the
// index directories, so it is for a metrics scrape, not a hot path.
func (ix *Indexer) Stats(ctx context.Context) Stats {
	last, _ := ix.store.LastPosition(ctx)
	ix.columns.Prune()
	ix.mu.Lock()
	st := Stats{LogReaders: ix.readers, Position: ix.readerPos, LastPosition: last, NumberColumnBytes: ix.columns.Bytes()}
	if last > ix.readerPos {
		st.LagPositions = uint64(last - ix.readerPos)
		st.LagSeconds = time.Since(ix.caughtUpAt).Seconds()
	}
	type snap struct {
		s   IndexStats
		idx bleve.Index
		dir string
		vs  *vectorSet
	}
	var snaps []snap
	for _, ci := range ix.colls {
		snaps = append(snaps, snap{IndexStats{DB: ci.db, Collection: ci.name, CollectionID: ci.id, Ready: !ci.rebuilding && !ci.dormant, Dormant: ci.dormant, Rebuilds: ci.rebuilds, Applied: ci.applied}, ci.idx, ci.dir, ci.vectors})
	}
	ix.mu.Unlock()
	for _, sn := range snaps {
		if sn.idx != nil {
			sn.s.Documents, _ = sn.idx.DocCount()
		}
		if sn.dir != "" {
			sn.s.DiskBytes = dirSize(sn.dir)
		}
		if sn.vs != nil {
			for _, f := range sn.vs.fields {
				vst := f.idx.Stats()
				sn.s.Vectors += vst.Live
				sn.s.VectorBytes += int64(vst.Bytes)
			}
		}
		st.Indexes = append(st.Indexes, sn.s)
	}
	return st
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
