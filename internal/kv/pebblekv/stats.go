package pebblekv

import (
	"errors"

	"github.com/foliodb/folio/internal/kv"
)

// groupSizeBuckets are the bounds of commits per group: 1 when commits
// come one at a time, up to maxGroup under a burst.
var groupSizeBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, maxGroup}

// Stats is a snapshot of the store's commit pipeline and of Pebble's own
// metrics, for monitoring.
type Stats struct {
	// CommitGroupSize is the commits written per Pebble batch; SyncSeconds
	// the time of each WAL fsync, which makes one or more groups durable.
	CommitGroupSize kv.HistogramSnapshot
	SyncSeconds     kv.HistogramSnapshot
	// DiskBytes is what Pebble's files take on disk (tables, WAL,
	// manifests); MemTableBytes its memtables' memory.
	DiskBytes     uint64
	MemTableBytes uint64
	// Compactions is the compactions completed since the store opened;
	// CompactionDebtBytes Pebble's estimate of the bytes to compact before
	// the LSM is in shape. Flushes is the memtable flushes.
	Compactions         int64
	CompactionDebtBytes uint64
	Flushes             int64
	// ReadAmp is the sublevels and levels a read may have to look into.
	ReadAmp int
	// BlockCacheBytes is the block cache's size in use; BlockCacheHits and
	// BlockCacheMisses count its lookups since the store opened.
	BlockCacheBytes                  int64
	BlockCacheHits, BlockCacheMisses int64
	// ValueCacheBytes is what the value cache holds (keys, values and
	// their overhead); ValueCacheHits and ValueCacheMisses count the reads
	// it served and those it sent on to Pebble.
	ValueCacheBytes                  int64
	ValueCacheHits, ValueCacheMisses int64
	// Written is what the store has written since it opened.
	Written Written
	// DiskFull: commits are refused for want of disk space (see diskfull.go).
	DiskFull bool
	// Damaged: Pebble found damaged data, and the store takes no writes
	// (see damage.go).
	Damaged bool
}

// TxCounters are the outcomes of the store's transactions (kv.Counted).
func (s *Store) TxCounters() *kv.TxCounters { return s.counters }

// Stats reports the store's commit pipeline and Pebble's metrics now.
func (s *Store) Stats() Stats {
	m := s.db.Metrics()
	var flushed, compacted uint64
	for _, l := range m.Levels {
		flushed += l.TableBytesFlushed + l.BlobBytesFlushed
		compacted += l.TableBytesCompacted + l.BlobBytesCompacted
	}
	return Stats{
		CommitGroupSize:     s.groupSizes.Snapshot(),
		SyncSeconds:         s.syncTimes.Snapshot(),
		DiskBytes:           m.DiskSpaceUsage(),
		MemTableBytes:       m.MemTable.Size,
		Compactions:         m.Compact.Count,
		CompactionDebtBytes: m.Compact.EstimatedDebt,
		Flushes:             m.Flush.Count,
		ReadAmp:             m.ReadAmp(),
		BlockCacheBytes:     m.BlockCache.Size,
		BlockCacheHits:      m.BlockCache.Hits,
		BlockCacheMisses:    m.BlockCache.Misses,
		ValueCacheBytes:     s.values.size(),
		ValueCacheHits:      s.values.hits.Load(),
		ValueCacheMisses:    s.values.misses.Load(),
		Written: Written{
			BatchKeys:      s.batchKeys.Load(),
			BatchBytes:     s.batchBytes.Load(),
			WALBytes:       m.WAL.BytesWritten,
			FlushedBytes:   flushed,
			CompactedBytes: compacted,
		},
		DiskFull: isNoSpace(s.failed()) || errors.Is(s.disk.check(), kv.ErrStorageFull),
		Damaged:  s.damage.err() != nil,
	}
}

// Written counts what a store wrote since it opened, at each step a write
// takes: the commit groups' batches (keys and bytes, the store's own
// position key included), Pebble's WAL, the tables flushed from its
// memtables, and the tables its compactions wrote. What an insert costs
// the disk is their sum divided by the inserts (BenchmarkWriteCost in
// internal/documents).
type Written struct {
	BatchKeys, BatchBytes                  int64
	WALBytes, FlushedBytes, CompactedBytes uint64
}
