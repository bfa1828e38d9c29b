package pebblekv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

// The benchmarks use 100,000 keys of 100-byte values. Commits are durable
// (fsync) in every benchmark, Folio's and raw Pebble's alike.
const benchKeys = 100_000

func benchKey(i int) []byte { return []byte(fmt.Sprintf("bench/%08d", i)) }

var benchValue = make([]byte, 100)

func loadedStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	for start := 0; start < benchKeys; start += 5000 {
		_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			for i := start; i < start+5000; i++ {
				if err := tx.Set(benchKey(i), benchValue); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// Both sides read from flushed tables, not from a memtable on one side
	// and a flushable batch on the other.
	if err := s.db.Flush(); err != nil {
		b.Fatal(err)
	}
	return s
}

// runWriters runs b.N operations spread over n goroutines, timing each, and
// reports the latency percentiles.
func runWriters(b *testing.B, n int, op func(rng *rand.Rand) error) {
	b.Helper()
	var mu sync.Mutex
	var latencies []time.Duration
	var failures int
	var wg sync.WaitGroup
	per := b.N / n
	b.ResetTimer()
	for w := 0; w < n; w++ {
		count := per
		if w == 0 {
			count += b.N % n
		}
		wg.Add(1)
		go func(seed uint64, count int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			local := make([]time.Duration, 0, count)
			fails := 0
			for i := 0; i < count; i++ {
				start := time.Now()
				if err := op(rng); err != nil {
					if !kv.IsRetryable(err) {
						b.Error(err)
						return
					}
					fails++
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			failures += fails
			mu.Unlock()
		}(uint64(w), count)
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(latencies)
	if len(latencies) > 0 {
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(failures)/float64(b.N)*100, "conflict-%")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkCommit: a serializable transaction reading one key and writing
// two, durable, at 1, 16 and 64 concurrent writers.
func BenchmarkCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := loadedStore(b)
			ctx := context.Background()
			runWriters(b, writers, func(rng *rand.Rand) error {
				tx, err := s.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
					return err
				}
				tx.Set(benchKey(rng.IntN(benchKeys)), benchValue)
				tx.Set(benchKey(rng.IntN(benchKeys)), benchValue)
				_, err = tx.Commit(ctx)
				return err
			})
		})
	}
}

// BenchmarkRawPebbleCommit is BenchmarkCommit on raw Pebble batches with
// no isolation layer (Pebble's own group commit, fsync on): the baseline
// that shows what the serializable layer costs.
func BenchmarkRawPebbleCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := loadedRawPebble(b)
			runWriters(b, writers, func(rng *rand.Rand) error {
				v, closer, err := db.Get(benchKey(rng.IntN(benchKeys)))
				if err != nil {
					return err
				}
				_ = append([]byte(nil), v...)
				closer.Close()
				batch := db.NewBatch()
				batch.Set(benchKey(rng.IntN(benchKeys)), benchValue, nil)
				batch.Set(benchKey(rng.IntN(benchKeys)), benchValue, nil)
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
	for i := 0; i < benchKeys; i++ {
		batch.Set(benchKey(i), benchValue, nil)
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

// BenchmarkGet: point reads of random keys inside one transaction, on one
// goroutine.
func BenchmarkGet(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkGetOwnTx: a whole read-only transaction per point read.
func BenchmarkGetOwnTx(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := s.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
			b.Fatal(err)
		}
		tx.Commit(ctx)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkRawPebbleGet is BenchmarkGet on a raw Pebble snapshot.
func BenchmarkRawPebbleGet(b *testing.B) {
	db := loadedRawPebble(b)
	snap := db.NewSnapshot()
	defer snap.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, closer, err := snap.Get(benchKey(rng.IntN(benchKeys)))
		if err != nil {
			b.Fatal(err)
		}
		_ = append([]byte(nil), v...)
		closer.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkScan100: a 100-key scan from a random start inside a transaction.
func BenchmarkScan100(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := tx.Scan(ctx, kv.Range{Begin: benchKey(rng.IntN(benchKeys - 100))}, kv.ScanOptions{Limit: 100})
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
		it.Close()
		if n != 100 {
			b.Fatalf("scan returned %d keys", n)
		}
	}
}

// BenchmarkRawPebbleScan100 is BenchmarkScan100 on a raw Pebble snapshot.
func BenchmarkRawPebbleScan100(b *testing.B) {
	db := loadedRawPebble(b)
	snap := db.NewSnapshot()
	defer snap.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: benchKey(rng.IntN(benchKeys - 100))})
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
