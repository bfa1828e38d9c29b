package pebblekv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
)

// The benchmarks use 100,000 keys of 100-byte values. Commits are durable
// (fsync) in every benchmark, Folio's and raw Pebble's alike.

func loadedStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	kvtest.Load(b, s)
	// Both sides read from flushed tables, not from a memtable on one side
	// and a flushable batch on the other.
	if err := s.db.Flush(); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCommit: kvtest.BenchCommit, durable.
func BenchmarkCommit(b *testing.B) {
	kvtest.BenchCommit(b, func(b *testing.B) kv.Store { return loadedStore(b) })
}

// BenchmarkRawPebbleCommit is BenchmarkCommit on raw Pebble batches with
// no isolation layer (Pebble's own group commit, fsync on): the baseline
// that shows what the serializable layer costs.
func BenchmarkRawPebbleCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := loadedRawPebble(b)
			kvtest.RunWriters(b, writers, func(rng *rand.Rand) error {
				v, closer, err := db.Get(kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)))
				if err != nil {
					return err
				}
				_ = append([]byte(nil), v...)
				closer.Close()
				batch := db.NewBatch()
				batch.Set(kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)), kvtest.BenchValue, nil)
				batch.Set(kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)), kvtest.BenchValue, nil)
				err = db.Apply(batch, pebble.Sync)
				batch.Close()
				return err
			})
		})
	}
}

func loadedRawPebble(b *testing.B) *pebble.DB {
	b.Helper()
	cache := pebble.NewCache(DefaultCacheSize)
	defer cache.Unref()
	db, err := pebble.Open(b.TempDir(), &pebble.Options{Cache: cache, FormatMajorVersion: pebble.FormatNewest, MemTableSize: 64 << 20, Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	batch := db.NewBatch()
	for i := 0; i < kvtest.BenchKeys; i++ {
		batch.Set(kvtest.BenchKey(i), kvtest.BenchValue, nil)
	}
	if err := db.Apply(batch, pebble.Sync); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkGet: kvtest.BenchGet.
func BenchmarkGet(b *testing.B) { kvtest.BenchGet(b, loadedStore(b)) }

// BenchmarkGetOwnTx: kvtest.BenchGetOwnTx.
func BenchmarkGetOwnTx(b *testing.B) { kvtest.BenchGetOwnTx(b, loadedStore(b)) }

// BenchmarkRawPebbleGet is BenchmarkGet on a raw Pebble snapshot.
func BenchmarkRawPebbleGet(b *testing.B) {
	db := loadedRawPebble(b)
	snap := db.NewSnapshot()
	defer snap.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, closer, err := snap.Get(kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)))
		if err != nil {
			b.Fatal(err)
		}
		_ = append([]byte(nil), v...)
		closer.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkScan100: kvtest.BenchScan100.
func BenchmarkScan100(b *testing.B) { kvtest.BenchScan100(b, loadedStore(b)) }

// BenchmarkRawPebbleScan100 is BenchmarkScan100 on a raw Pebble snapshot.
func BenchmarkRawPebbleScan100(b *testing.B) {
	db := loadedRawPebble(b)
	snap := db.NewSnapshot()
	defer snap.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: kvtest.BenchKey(rng.IntN(kvtest.BenchKeys - 100))})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok && n < 100; ok = it.Next() {
			_ = it.Value()
			n++
		}
		it.Close()
		if n != 100 {
			b.Fatal(errors.New("short scan"))
		}
	}
}

// BenchmarkMemTableSize: durable commits of 16 writers, each writing two
// values of 100 bytes or 1 KiB, at three memtable sizes. The memtable size
// is also each WAL file's preallocation, so it sets the disk a small store
// takes; run with -count to interleave the sizes and compare within a run.
func BenchmarkMemTableSize(b *testing.B) {
	for _, valueSize := range []int{100, 1024} {
		value := make([]byte, valueSize)
		for _, mib := range []int64{4, 16, 64} {
			b.Run(fmt.Sprintf("value=%d/memtable=%dMiB", valueSize, mib), func(b *testing.B) {
				s, err := Open(Options{Dir: b.TempDir(), MemTableSize: mib << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				ctx := context.Background()
				kvtest.RunWriters(b, 16, func(rng *rand.Rand) error {
					tx, err := s.Begin(ctx)
					if err != nil {
						return err
					}
					defer tx.Rollback()
					tx.Set(kvtest.BenchKey(rng.IntN(1_000_000)), value)
					tx.Set(kvtest.BenchKey(rng.IntN(1_000_000)), value)
					_, err = tx.Commit(ctx)
					return err
				})
			})
		}
	}
}
